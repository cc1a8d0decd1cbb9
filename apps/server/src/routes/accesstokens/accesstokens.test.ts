/** /api/accesstokens: role + per-resource masks, secret shown once and stored hashed, delete. */
import { type AccessToken, ALL, PERM, ROLE_PERMISSIONS } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

type Created = AccessToken & { token: string };
type ErrorBody = { code: string; details: { path: string }[] };

describe("access tokens", () => {
  const t = useTestServer();

  it("POST returns the secret once; GET lists role and masks without it", async () => {
    const res = await t.api<Created>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "monitoring", role: "viewer", permissions: { devices: PERM.get, tunnels: 0 } },
    });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^tern_at_[A-Za-z0-9_-]{43}$/);
    expect(res.body).toMatchObject({
      name: "monitoring",
      role: "viewer",
      org: t.admin.orgId,
      creator: t.admin.email,
      lastUsedAt: null,
    });
    // Named masks as given, the rest from the role.
    expect(res.body.permissions).toEqual({ ...ROLE_PERMISSIONS.viewer, devices: PERM.get, tunnels: 0 });

    const list = await t.api<AccessToken[]>("GET", "/api/accesstokens", { token: t.admin.token });
    const listed = list.body.find((k) => k.id === res.body.id)!;
    expect(listed).toEqual({ ...res.body, token: undefined, lastUsedAt: null });
    expect(list.text).not.toContain(res.body.token);
  });

  it("the key authenticates, acts with its masks, and records its use", async () => {
    const key = (
      await t.api<Created>("POST", "/api/accesstokens", {
        token: t.admin.token,
        body: { name: "orgs-reader", role: "viewer", permissions: { organizations: PERM.get, members: 0 } },
      })
    ).body;
    expect((await t.api("GET", "/api/organizations", { token: key.token })).status).toBe(200);
    expect((await t.api("GET", "/api/members", { token: key.token })).status).toBe(403);
    expect((await t.api("PUT", `/api/organizations/${t.admin.orgId}`, { token: key.token, body: {} })).status).toBe(403);
    const list = await t.api<AccessToken[]>("GET", "/api/accesstokens", { token: t.admin.token });
    expect(list.body.find((k) => k.id === key.id)?.lastUsedAt).not.toBeNull();
  });

  it("stores only the hash of the secret", async () => {
    const key = (await t.api<Created>("POST", "/api/accesstokens", { token: t.admin.token, body: { name: "hashed" } })).body;
    const rows = await sql<{ j: string }>`select row_to_json(a)::text as j from access_tokens a`.execute(t.database.db);
    const dump = rows.rows.map((r) => r.j).join("\n");
    expect(dump).toContain(key.id);
    expect(dump).not.toContain(key.token);
    expect(dump).not.toContain(key.token.slice("tern_at_".length));
  });

  it("refuses masks above the creator's rights, naming each resource", async () => {
    const manager = await t.addMember("manager");
    const res = await t.api<ErrorBody>("POST", "/api/accesstokens", {
      token: manager.token,
      body: { name: "too much", role: "manager", permissions: { members: ALL, organizations: ALL } },
    });
    expect(res.status).toBe(403);
    expect(res.body.details.map((d) => d.path).sort()).toEqual(["permissions.members", "permissions.organizations"]);
  });

  it("validates masks and roles", async () => {
    for (const body of [
      { name: "x", permissions: { devices: 16 } },
      { name: "x", permissions: { nosuch: 1 } },
      { name: "x", role: "admin" },
      { name: "" },
    ]) {
      const res = await t.api<ErrorBody>("POST", "/api/accesstokens", { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it("DELETE revokes the key and the keys it created", async () => {
    const parent = (
      await t.api<Created>("POST", "/api/accesstokens", { token: t.admin.token, body: { name: "parent", role: "owner" } })
    ).body;
    const child = (
      await t.api<Created>("POST", "/api/accesstokens", { token: parent.token, body: { name: "child", role: "viewer" } })
    ).body;
    expect(child.creator).toBe("token:parent");
    expect((await t.api("GET", "/api/organizations", { token: child.token })).status).toBe(200);

    expect((await t.api("DELETE", `/api/accesstokens/${parent.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: parent.token })).status).toBe(401);
    expect((await t.api("GET", "/api/organizations", { token: child.token })).status).toBe(401);
    expect((await t.api("DELETE", `/api/accesstokens/${parent.id}`, { token: t.admin.token })).status).toBe(404);
  });

  it("a key acts only in its own organization", async () => {
    const org2 = (await t.api<{ id: string }>("POST", "/api/organizations", { token: t.admin.token, body: { name: "Other" } }))
      .body;
    const key = (
      await t.api<Created>("POST", "/api/accesstokens", { token: t.admin.token, body: { name: "home", role: "owner" } })
    ).body;
    expect((await t.api("GET", "/api/accesstokens", { token: key.token, query: { org: org2.id } })).status).toBe(404);
    expect((await t.api("GET", `/api/organizations/${org2.id}`, { token: key.token })).status).toBe(404);
    const orgs = await t.api<{ id: string }[]>("GET", "/api/organizations", { token: key.token });
    expect(orgs.body.map((o) => o.id)).toEqual([t.admin.orgId]);
  });
});
