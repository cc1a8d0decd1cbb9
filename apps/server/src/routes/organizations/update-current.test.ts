/**
 * PUT /api/organizations (the spec's bare path): changes the current
 * organization, `?org` or the caller's default, with the checks and answers of
 * PUT /api/organizations/{id}.
 */
import type { Organization } from "@tern/protocol";
import { PERM, ROLE_PERMISSIONS } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { type TestUser, useTestServer } from "../../../test/support/test-server.ts";
import { createTunnels, type ErrorBody, tunnelBody, wanDevice } from "../../../test/support/tunnels.ts";

type Tenant = TestUser & { orgId: string; accountId: string };
type Updated = Organization & { jobIds?: string[] } & ErrorBody;

describe("PUT /organizations (current organization)", () => {
  const t = useTestServer();

  const put = (token: string, body: unknown, org?: string) =>
    t.api<Updated>("PUT", "/api/organizations", { token, body, query: { org } });
  const get = async (token: string, id: string) => (await t.api<Organization>("GET", `/api/organizations/${id}`, { token })).body;

  async function key(tenant: Tenant, permissions?: Record<string, number>): Promise<string> {
    const res = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: tenant.token,
      body: { name: `key-${crypto.randomUUID()}`, role: "owner", ...(permissions ? { permissions } : {}) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.token;
  }

  describe("happy", () => {
    it("without org: changes the caller's default organization; fields not sent stay as they were", async () => {
      const tenant = await t.createTenant("Current");
      const range = await put(tenant.token, { tunnelRange: "10.99.0.0/20", group: "Branches" });
      expect(range.status, range.text).toBe(200);
      expect(range.body).toMatchObject({ id: tenant.orgId, tunnelRange: "10.99.0.0/20", group: "Branches" });
      expect(range.body).not.toHaveProperty("jobIds");

      const res = await put(tenant.token, { description: "head office" });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        id: tenant.orgId,
        name: "Current organization",
        description: "head office",
        group: "Branches",
        tunnelRange: "10.99.0.0/20",
      });
      expect(await get(tenant.token, tenant.orgId)).toEqual(res.body);

      // A rename keeps the description, the group and the range.
      const renamed = await put(tenant.token, { name: "HQ" });
      expect(renamed.body).toMatchObject({
        name: "HQ",
        description: "head office",
        group: "Branches",
        tunnelRange: "10.99.0.0/20",
      });
    });

    it("?org picks another organization of the caller; the default one is untouched", async () => {
      const tenant = await t.createTenant("Picker");
      const other = await t.api<Organization>("POST", "/api/organizations", { token: tenant.token, body: { name: "Second" } });
      expect(other.status).toBe(201);
      const res = await put(tenant.token, { description: "second one" }, other.body.id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id: other.body.id, description: "second one" });
      expect((await get(tenant.token, tenant.orgId)).description).toBe("");
    });

    it("an access token changes its own organization", async () => {
      const tenant = await t.createTenant("Keyed");
      const res = await put(await key(tenant), { description: "by key" });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id: tenant.orgId, description: "by key" });
    });

    it("a new tunnel range re-addresses the tunnels: 202 with the device jobs, as PUT /organizations/{id}", async () => {
      const tenant = await t.createTenant("Readdress current");
      const [a, b] = [await wanDevice(t, { orgId: tenant.orgId }), await wanDevice(t, { orgId: tenant.orgId })];
      await createTunnels(t, [tunnelBody(a, b)], { token: tenant.token });
      const res = await put(tenant.token, { tunnelRange: "10.210.0.0/16" });
      expect(res.status, res.text).toBe(202);
      expect(res.body.tunnelRange).toBe("10.210.0.0/16");
      expect(res.body.jobIds).toHaveLength(2);
      expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds!.join(",")}`);
      const jobs = await t.database.db
        .selectFrom("jobs")
        .select(["device_id", "type"])
        .where("id", "in", res.body.jobIds!)
        .execute();
      expect(jobs.map((j) => j.device_id).sort()).toEqual([a.id, b.id].sort());
      expect(jobs.every((j) => j.type === "organization")).toBe(true);
    });
  });

  describe("errors", () => {
    it("unknown fields are refused (400 VALIDATION_FAILED) and nothing changes", async () => {
      const tenant = await t.createTenant("Unknown fields");
      for (const body of [
        { description: "x", tunnelrange: "10.1.0.0/16" },
        { id: crypto.randomUUID() },
        { account: tenant.accountId },
      ]) {
        const res = await put(tenant.token, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.code).toBe("VALIDATION_FAILED");
        expect(res.body.details.map((d) => d.path)).toContain(Object.keys(body).find((k) => k !== "description"));
      }
      expect(await get(tenant.token, tenant.orgId)).toMatchObject({ description: "", tunnelRange: "10.100.0.0/16" });
    });

    it("bad values are 400 VALIDATION_FAILED at their field; not JSON is 400", async () => {
      const tenant = await t.createTenant("Bad values");
      const cases: [unknown, string][] = [
        [{ tunnelRange: "10.0.0.0/25" }, "tunnelRange"],
        [{ tunnelRange: "10.0.0.1/24" }, "tunnelRange"],
        [{ tunnelRange: "not a network" }, "tunnelRange"],
        [{ name: "" }, "name"],
        [{ name: "n".repeat(101) }, "name"],
        [{ description: 5 }, "description"],
        [{ group: "g".repeat(101) }, "group"],
      ];
      for (const [body, path] of cases) {
        const res = await put(tenant.token, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.code).toBe("VALIDATION_FAILED");
        expect(res.body.details[0]?.path, JSON.stringify(body)).toBe(path);
      }
      const raw = await t.api<ErrorBody>("PUT", "/api/organizations", { token: tenant.token, raw: "{not json" });
      expect(raw.status).toBe(400);
      expect(raw.body.code).toBe("VALIDATION_FAILED");
      expect(await get(tenant.token, tenant.orgId)).toMatchObject({
        name: "Bad values organization",
        tunnelRange: "10.100.0.0/16",
      });
    });

    it("a name another organization of the account has is 409 CONFLICT", async () => {
      const tenant = await t.createTenant("Names");
      expect((await t.api("POST", "/api/organizations", { token: tenant.token, body: { name: "Taken" } })).status).toBe(201);
      const res = await put(tenant.token, { name: "Taken" });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("CONFLICT");
    });

    it("a range over a LAN of the organization's devices is 400 LAN_OVERLAPPING", async () => {
      const tenant = await t.createTenant("Overlap current");
      const device = await wanDevice(t, { orgId: tenant.orgId });
      const [x, y] = device.lan.IPv4.split(".");
      const res = await put(tenant.token, { tunnelRange: `${x}.${y}.0.0/16` });
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe("LAN_OVERLAPPING");
      expect((await get(tenant.token, tenant.orgId)).tunnelRange).toBe("10.100.0.0/16");
    });

    it("org that is not an id is 400; an unknown organization is 404", async () => {
      const bad = await put(t.admin.token, { description: "x" }, "not-a-uuid");
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("VALIDATION_FAILED");
      const unknown = await put(t.admin.token, { description: "x" }, crypto.randomUUID());
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe("NOT_FOUND");
    });
  });

  describe("security", () => {
    it("no token or a bad token is 401", async () => {
      for (const token of [undefined, "not-a-token"]) {
        const res = await t.api<ErrorBody>("PUT", "/api/organizations", { token, body: { description: "x" } });
        expect(res.status).toBe(401);
        expect(res.body.code).toBe("UNAUTHENTICATED");
      }
    });

    it("a viewer is 403; a manager may change the organization (its 'put' bit on organizations)", async () => {
      expect(ROLE_PERMISSIONS.viewer.organizations & PERM.put).toBe(0);
      const viewer = await t.addMember("viewer");
      const denied = await put(viewer.token, { description: "viewer" });
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe("FORBIDDEN");
      const manager = await t.addMember("manager");
      const allowed = await put(manager.token, { description: "manager" });
      expect(allowed.status, allowed.text).toBe(200);
      expect(allowed.body.id).toBe(t.admin.orgId);
      expect((await get(t.admin.token, t.admin.orgId)).description).toBe("manager");
    });

    it("a key without 'put' on organizations is 403; another tenant cannot reach this organization", async () => {
      const tenant = await t.createTenant("Guarded");
      const readOnly = await key(tenant, { ...ROLE_PERMISSIONS.owner, organizations: PERM.get });
      const res = await put(readOnly, { description: "no" });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");

      const intruder = await t.createTenant("Intruder");
      for (const token of [intruder.token, await key(intruder)]) {
        const cross = await put(token, { description: "taken over" }, tenant.orgId);
        expect([403, 404]).toContain(cross.status);
        expect(cross.text).not.toContain(tenant.orgId);
        // Without org the intruder changes only its own organization.
        const own = await put(token, { description: "mine" });
        expect(own.body.id).toBe(intruder.orgId);
      }
      expect((await get(tenant.token, tenant.orgId)).description).toBe("");
    });
  });
});
