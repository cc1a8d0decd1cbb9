/**
 * Versioning table, 6.3.1: "Access tokens (GET, POST): role permission fields
 * added". Keys carry a role and per-resource masks (get=1 post=2 put=4 del=8),
 * GET and POST show them, and a key can do exactly what its masks allow.
 */
import { type AccessToken, type PathLabel, PERM, PERMISSION_RESOURCES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/test-server.ts";

describe("6.3.1 access tokens with role permission fields", () => {
  const t = useTestServer();

  it("POST and GET /accesstokens carry role and the full permission masks", async () => {
    const created = await t.api<AccessToken & { token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "labels reader", role: "manager", permissions: { pathlabels: PERM.get } },
    });
    expect(created.status).toBe(201);
    expect(created.body.role).toBe("manager");
    expect(Object.keys(created.body.permissions).sort()).toEqual([...PERMISSION_RESOURCES].sort());
    expect(created.body.permissions.pathlabels).toBe(PERM.get);
    // Not named: the role's masks (a manager has every bit on path labels' neighbours).
    expect(created.body.permissions.mlpolicies).toBe(15);
    const listed = await t.api<AccessToken[]>("GET", "/api/accesstokens", { token: t.admin.token });
    const entry = listed.body.find((k) => k.id === created.body.id);
    expect(entry).toMatchObject({ role: "manager", permissions: created.body.permissions });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
  });

  it("a key with pathlabels=1 can read path labels but not create, change or delete them", async () => {
    const label = (await t.api<PathLabel>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "ISP" } })).body;
    const key = (
      await t.api<{ token: string }>("POST", "/api/accesstokens", {
        token: t.admin.token,
        body: { name: "read labels", role: "owner", permissions: { pathlabels: PERM.get } },
      })
    ).body.token;
    expect((await t.api("GET", "/api/pathlabels", { token: key })).status).toBe(200);
    expect((await t.api("GET", `/api/pathlabels/${label.id}`, { token: key })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/api/pathlabels", { name: "new" }],
      ["PUT", `/api/pathlabels/${label.id}`, { name: "renamed" }],
      ["DELETE", `/api/pathlabels/${label.id}`, undefined],
    ] as const) {
      const res = await t.api<{ code: string; error: string }>(method, path, { token: key, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
      expect(res.body.error).toContain("pathlabels");
    }
    // Its other masks still work as given: an owner role key may create policies.
    expect((await t.api("POST", "/api/mlpolicies", { token: key, body: { name: "p" } })).status).toBe(201);
    expect((await t.api<PathLabel>("GET", `/api/pathlabels/${label.id}`, { token: t.admin.token })).body.name).toBe("ISP");
  });

  it("a key with pathlabels=6 (post+put) can create and change but neither read nor delete", async () => {
    const key = (
      await t.api<{ token: string }>("POST", "/api/accesstokens", {
        token: t.admin.token,
        body: { name: "label writer", role: "viewer", permissions: { pathlabels: PERM.post | PERM.put } },
      })
    ).body.token;
    const created = await t.api<PathLabel>("POST", "/api/pathlabels", { token: key, body: { name: "written by key" } });
    expect(created.status).toBe(201);
    expect(
      (await t.api("PUT", `/api/pathlabels/${created.body.id}`, { token: key, body: { name: "renamed by key" } })).status,
    ).toBe(200);
    expect((await t.api("GET", "/api/pathlabels", { token: key })).status).toBe(403);
    expect((await t.api("DELETE", `/api/pathlabels/${created.body.id}`, { token: key })).status).toBe(403);
  });
});
