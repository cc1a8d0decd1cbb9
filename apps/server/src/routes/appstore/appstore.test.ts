/**
 * App store rows: GET /appstore, POST /appstore/purchase/{id},
 * GET /appstore/purchased, GET/DELETE /appstore/purchased/{id}, and the spec's
 * GET /appstore/purchased/{id}/action (also POST) with per-app actions: a real
 * CA-issued certificate for remote-vpn (its devices and users: remote-vpn.test.ts),
 * configuration snapshots for config-snapshot.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { CatalogApp, PurchasedApp } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };
type ActionResult = { app: PurchasedApp; action: string; result: Record<string, unknown>; jobIds: string[] };

describe("app store", () => {
  const t = useTestServer();
  const purchase = (id: string, token = t.admin.token) => t.api<PurchasedApp>("POST", `/api/appstore/purchase/${id}`, { token });

  it("GET /appstore lists the catalog with each app's actions", async () => {
    const res = await t.api<CatalogApp[]>("GET", "/api/appstore", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body.map((a) => [a.id, a.actions.map((x) => x.name)])).toEqual([
      ["remote-vpn", ["install", "uninstall", "updateCertificate", "addUser", "removeUser"]],
      ["config-snapshot", ["take-snapshot", "compare-snapshot"]],
    ]);
  });

  it("purchases once per organization; unknown apps are 404", async () => {
    const res = await purchase("remote-vpn");
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ app: { id: "remote-vpn", name: "Remote worker VPN" }, state: {}, lastAction: null });
    const again = await purchase("remote-vpn");
    expect(again.status).toBe(409);
    expect((await t.api<ErrorBody>("POST", "/api/appstore/purchase/no-such-app", { token: t.admin.token })).body.code).toBe(
      "NOT_FOUND",
    );
    const bad = await t.api<ErrorBody>("POST", "/api/appstore/purchase/Bad_Id!", { token: t.admin.token });
    expect(bad.status).toBe(400);
    const tenant = await t.createTenant("Other");
    expect((await purchase("remote-vpn", tenant.token)).status).toBe(201);
  });

  it("GET /appstore/purchased lists with sort, filter and paging; GET {id} reads one", async () => {
    await purchase("config-snapshot");
    const all = await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", { token: t.admin.token });
    expect(all.headers.get("records-total")).toBe("2");
    expect(all.body.map((p) => p.app.id)).toEqual(["remote-vpn", "config-snapshot"]);
    const desc = await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", {
      token: t.admin.token,
      query: { sort: "app", order: "desc", limit: 1 },
    });
    expect(desc.body.map((p) => p.app.id)).toEqual(["remote-vpn"]);
    expect(desc.headers.get("records-total")).toBe("2");
    const filtered = await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "app", op: "contains", val: "snap" }]) },
    });
    expect(filtered.body.map((p) => p.app.id)).toEqual(["config-snapshot"]);
    const one = await t.api<PurchasedApp>("GET", `/api/appstore/purchased/${filtered.body[0]!.id}`, { token: t.admin.token });
    expect(one.body).toEqual(filtered.body[0]);
  });

  it("updateCertificate issues a real certificate from the organization CA; the keys are stored encrypted and never returned", async () => {
    const vpn = (
      await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", {
        token: t.admin.token,
        query: { filter: JSON.stringify([{ key: "app", op: "==", val: "remote-vpn" }]) },
      })
    ).body[0]!;
    const res = await t.api<ActionResult>("GET", `/api/appstore/purchased/${vpn.id}/action`, {
      token: t.admin.token,
      query: { action: "updateCertificate", validityDays: 30, commonName: "vpn.example.net" },
    });
    expect(res.status).toBe(200);
    const result = res.body.result as { pem: string; fingerprintSha256: string; notAfter: string; subject: string; ca: string };
    const cert = new X509Certificate(result.pem);
    const ca = new X509Certificate(result.ca);
    expect(cert.fingerprint256).toBe(result.fingerprintSha256);
    expect(cert.subject).toBe("CN=vpn.example.net");
    expect(cert.subjectAltName).toBe("DNS:vpn.example.net");
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(res.body.jobIds).toEqual([]);
    const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    expect(result.notAfter).toBe(new Date(cert.validTo).toISOString());
    expect(res.body.app.state).toMatchObject({ certificate: { fingerprintSha256: cert.fingerprint256 } });
    expect(res.body.app.lastAction).toMatchObject({ name: "updateCertificate" });
    expect(res.text).not.toMatch(/PRIVATE KEY|privateKeyEnc|caKeyEnc/);

    const row = await t.database.db
      .selectFrom("purchased_apps")
      .select("state")
      .where("id", "=", vpn.id)
      .executeTakeFirstOrThrow();
    const stored = row.state as { privateKeyEnc: string; caKeyEnc: string };
    expect(stored.privateKeyEnc).not.toContain("PRIVATE KEY");
    expect(stored.caKeyEnc).not.toContain("PRIVATE KEY");
    const key = createPrivateKey(t.deps.keyring.decrypt(stored.privateKeyEnc, `app-key:${vpn.id}`));
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(ca.checkPrivateKey(createPrivateKey(t.deps.keyring.decrypt(stored.caKeyEnc, `app-key:${vpn.id}`)))).toBe(true);

    // POST works the same; a second certificate replaces the first.
    const post = await t.api<ActionResult>("POST", `/api/appstore/purchased/${vpn.id}/action`, {
      token: t.admin.token,
      body: { action: "updateCertificate", params: {} },
    });
    expect(post.status).toBe(200);
    const second = new X509Certificate((post.body.result as { pem: string }).pem);
    expect(second.fingerprint256).not.toBe(cert.fingerprint256);
    // Same CA and server identity: clients that trust the CA accept the new certificate.
    expect(second.checkIssued(ca)).toBe(true);
    expect(second.subject).toBe("CN=vpn.example.net");
    expect((Date.parse(second.validTo) - Date.now()) / 86_400_000).toBeGreaterThan(364);
    expect(
      (await t.api<PurchasedApp>("GET", `/api/appstore/purchased/${vpn.id}`, { token: t.admin.token })).body.state,
    ).toMatchObject({
      certificate: { fingerprintSha256: second.fingerprint256 },
    });
  });

  it("actions and their params are validated per app: unknown action names the allowed ones", async () => {
    const apps = (await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", { token: t.admin.token })).body;
    const vpn = apps.find((a) => a.app.id === "remote-vpn")!;
    const snap = apps.find((a) => a.app.id === "config-snapshot")!;
    const run = (id: string, body: unknown) =>
      t.api<ErrorBody>("POST", `/api/appstore/purchased/${id}/action`, { token: t.admin.token, body });
    const unknown = await run(vpn.id, { action: "take-snapshot", params: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([
      {
        path: "action",
        message:
          'unknown action "take-snapshot" for Remote worker VPN; allowed: install, uninstall, updateCertificate, addUser, removeUser',
      },
    ]);
    const proto = await run(vpn.id, { action: "constructor", params: {} });
    expect(proto.status).toBe(400);
    expect((await run(vpn.id, { action: "updateCertificate", params: { validityDays: 0 } })).body.details[0]?.path).toBe(
      "params.validityDays",
    );
    expect((await run(vpn.id, { action: "updateCertificate", params: { validityDays: 3650 } })).body.details[0]?.path).toBe(
      "params.validityDays",
    );
    expect((await run(vpn.id, { action: "updateCertificate", params: { commonName: "not a host" } })).body.details[0]?.path).toBe(
      "params.commonName",
    );
    expect((await run(vpn.id, { action: "updateCertificate", params: { colour: "blue" } })).body.code).toBe("VALIDATION_FAILED");
    expect((await run(snap.id, { action: "take-snapshot", params: {} })).body.details[0]?.path).toBe("params.label");
    const missing = await t.api<ErrorBody>("GET", `/api/appstore/purchased/${snap.id}/action`, { token: t.admin.token });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0]).toEqual({
      path: "action",
      message: "give an action; Configuration snapshots has: take-snapshot, compare-snapshot",
    });
    const gone = await t.api<ErrorBody>("GET", `/api/appstore/purchased/${crypto.randomUUID()}/action`, {
      token: t.admin.token,
      query: { action: "x" },
    });
    expect(gone.status).toBe(404);
  });

  it("config-snapshot records the fleet's desired hashes and tells which devices changed since", async () => {
    const snap = (
      await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", {
        token: t.admin.token,
        query: { filter: JSON.stringify([{ key: "app", op: "==", val: "config-snapshot" }]) },
      })
    ).body[0]!;
    const one = await insertTestDevice(t, { name: "snap-1" });
    const two = await insertTestDevice(t, { name: "snap-2" });
    const run = (action: string, label: string) =>
      t.api<ActionResult>("GET", `/api/appstore/purchased/${snap.id}/action`, { token: t.admin.token, query: { action, label } });
    const taken = await run("take-snapshot", "before change");
    expect(taken.status).toBe(200);
    expect(taken.body.result).toMatchObject({ label: "before change", devices: 2 });
    expect((await run("compare-snapshot", "before change")).body.result).toMatchObject({
      unchanged: true,
      changed: [],
      added: [],
      removed: [],
    });

    await t.database.db.updateTable("devices").set({ desired_hash: "new-hash" }).where("id", "=", one.id).execute();
    const three = await insertTestDevice(t, { name: "snap-3" });
    await t.database.db.deleteFrom("devices").where("id", "=", two.id).execute();
    const compared = await run("compare-snapshot", "before change");
    expect(compared.body.result).toMatchObject({
      unchanged: false,
      changed: [{ id: one.id, name: "snap-1" }],
      added: [{ id: three.id, name: "snap-3" }],
      removed: [two.id],
    });
    expect(compared.body.app.lastAction?.result).toBe("1 changed, 1 added, 1 removed since before change");
    const missing = await t.api<ErrorBody>("GET", `/api/appstore/purchased/${snap.id}/action`, {
      token: t.admin.token,
      query: { action: "compare-snapshot", label: "never" },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.details[0]).toEqual({ path: "params.label", message: "known labels: before change" });
  });

  it("a viewer may read but not run actions, even with GET; DELETE removes a purchase", async () => {
    const viewer = await t.addMember("viewer");
    const apps = (await t.api<PurchasedApp[]>("GET", "/api/appstore/purchased", { token: viewer.token })).body;
    expect(apps).toHaveLength(2);
    const res = await t.api<ErrorBody>("GET", `/api/appstore/purchased/${apps[0]!.id}/action`, {
      token: viewer.token,
      query: { action: "updateCertificate" },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain("'put' permission on 'applications'");
    expect((await t.api("DELETE", `/api/appstore/purchased/${apps[0]!.id}`, { token: viewer.token })).status).toBe(403);
    expect((await t.api("DELETE", `/api/appstore/purchased/${apps[0]!.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/appstore/purchased/${apps[0]!.id}`, { token: t.admin.token })).status).toBe(404);
    expect((await purchase(apps[0]!.app.id)).status).toBe(201);
  });
});
