/** /api/organizations: list, create, get, update (tunnel range), delete. */
import type { Organization } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

describe("organizations", () => {
  const t = useTestServer();

  it("GET lists the organizations the caller can act in, with records-total", async () => {
    const res = await t.api<Organization[]>("GET", "/api/organizations", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("1");
    expect(res.body[0]).toMatchObject({ id: t.admin.orgId, tunnelRange: "10.100.0.0/16", account: t.admin.accountId });
  });

  it("POST creates one with the default tunnel range; names are unique per account", async () => {
    const res = await t.api<Organization>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Branches" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "Branches", tunnelRange: "10.100.0.0/16", group: "Default", description: "" });
    const again = await t.api<ErrorBody>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Branches" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("CONFLICT");
    const got = await t.api<Organization>("GET", `/api/organizations/${res.body.id}`, { token: t.admin.token });
    expect(got.body).toEqual(res.body);
  });

  it("POST validates the tunnel range: a network (no host bits) of /24 or larger", async () => {
    for (const tunnelRange of ["10.0.0.0/25", "10.0.0.1/24", "10.0.0.0", "300.0.0.0/16", "10.0.0.0/33"]) {
      const res = await t.api<ErrorBody>("POST", "/api/organizations", {
        token: t.admin.token,
        body: { name: `r ${tunnelRange}`, tunnelRange },
      });
      expect(res.status, tunnelRange).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details[0]?.path).toBe("tunnelRange");
    }
    const ok = await t.api<Organization>("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name: "Small", tunnelRange: "172.16.5.0/24" },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.tunnelRange).toBe("172.16.5.0/24");
  });

  it("PUT changes the tunnel range (validated) and other fields", async () => {
    const org = (await t.api<Organization>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Ranges" } }))
      .body;
    const bad = await t.api<ErrorBody>("PUT", `/api/organizations/${org.id}`, {
      token: t.admin.token,
      body: { tunnelRange: "10.1.0.0/28" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ path: "tunnelRange" });
    const res = await t.api<Organization>("PUT", `/api/organizations/${org.id}`, {
      token: t.admin.token,
      body: { tunnelRange: "10.200.0.0/20", description: "hq" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tunnelRange: "10.200.0.0/20", description: "hq", name: "Ranges" });
  });

  it("a manager may change the organization but not create or delete organizations", async () => {
    const manager = await t.addMember("manager");
    const put = await t.api<Organization>("PUT", `/api/organizations/${t.admin.orgId}`, {
      token: manager.token,
      body: { description: "m" },
    });
    expect(put.status).toBe(200);
    expect((await t.api("POST", "/api/organizations", { token: manager.token, body: { name: "M" } })).status).toBe(403);
    expect((await t.api("DELETE", `/api/organizations/${t.admin.orgId}`, { token: manager.token })).status).toBe(403);
  });

  it("an organization-level owner cannot create organizations in the account", async () => {
    const owner = await t.addMember("owner");
    const res = await t.api<ErrorBody>("POST", "/api/organizations", { token: owner.token, body: { name: "Nope" } });
    expect(res.status).toBe(403);
  });

  it("DELETE removes an organization, but never the account's last one", async () => {
    const org = (await t.api<Organization>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Doomed" } }))
      .body;
    expect((await t.api("DELETE", `/api/organizations/${org.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/organizations/${org.id}`, { token: t.admin.token })).status).toBe(404);

    const tenant = await t.createTenant("Solo");
    const last = await t.api<ErrorBody>("DELETE", `/api/organizations/${tenant.orgId}`, { token: tenant.token });
    expect(last.status).toBe(409);
    expect(last.body.code).toBe("CONFLICT");
  });

  it("a bad id is a 400, an unknown one a 404", async () => {
    const bad = await t.api<ErrorBody>("GET", "/api/organizations/not-a-uuid", { token: t.admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION_FAILED");
    const unknown = await t.api<ErrorBody>("GET", `/api/organizations/${crypto.randomUUID()}`, { token: t.admin.token });
    expect(unknown.status).toBe(404);
  });

  it("the org query parameter picks the organization; every list is scoped by it", async () => {
    const other = (await t.api<Organization>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Scoped" } }))
      .body;
    const created = await t.api<{ id: string; org: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      query: { org: other.id },
      body: { name: "in other" },
    });
    expect(created.body.org).toBe(other.id);
    const inOther = await t.api<{ id: string }[]>("GET", "/api/accesstokens", { token: t.admin.token, query: { org: other.id } });
    const inDefault = await t.api<{ id: string }[]>("GET", "/api/accesstokens", { token: t.admin.token });
    expect(inOther.body.map((k) => k.id)).toEqual([created.body.id]);
    expect(inDefault.body.map((k) => k.id)).not.toContain(created.body.id);
  });
});
