/**
 * The remote worker VPN through the spec's action route: install on devices
 * (desired config and jobs), users (EAP passwords write-only and encrypted,
 * certificates from the organization CA, revocation through the CRL),
 * updateCertificate rolled out to every device, bad input as 4xx with
 * machine codes, tenancy and permissions. The router side is proven in the
 * lab (test-harness/test/scenarios/remote-vpn.scenarios.test.ts).
 */
// Before @peculiar/x509 (tsyringe needs the Reflect metadata API).
import "reflect-metadata";
import { createPrivateKey, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { configHash, type PurchasedApp } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestDevice, type TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { desiredConfig } from "../../../test/support/tunnels.ts";
import { appSecretAad } from "../../appstore/types.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };
type ActionResult = { app: PurchasedApp; action: string; result: Record<string, unknown>; jobIds: string[] };

describe("remote worker VPN (app store)", () => {
  const t = useTestServer();
  let appId = "";
  let one: TestDevice;
  let two: TestDevice;

  const run = (params: Record<string, unknown>, token = t.admin.token, id = appId) =>
    t.api<ActionResult & ErrorBody>("POST", `/api/appstore/purchased/${id}/action`, {
      token,
      body: { action: params.action, params: { ...params, action: undefined } },
    });
  const get = (query: Record<string, string | number>, token = t.admin.token) =>
    t.api<ActionResult & ErrorBody>("GET", `/api/appstore/purchased/${appId}/action`, { token, query });
  const deviceHash = async (id: string) =>
    (await t.database.db.selectFrom("devices").select("desired_hash").where("id", "=", id).executeTakeFirstOrThrow())
      .desired_hash;

  it("install (the spec's GET form): CA and server certificate made, one job, the device's config carries the VPN", async () => {
    one = await insertTestDevice(t, { name: "rvpn-1", lanIp: "192.168.61.1" });
    two = await insertTestDevice(t, { name: "rvpn-2", lanIp: "192.168.62.1" });
    appId = (await t.api<PurchasedApp>("POST", "/api/appstore/purchase/remote-vpn", { token: t.admin.token })).body.id;
    const res = await get({ action: "install", device: one.id, pool: "10.99.1.0/24", dns: "192.168.61.53,9.9.9.9" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result).toMatchObject({
      device: { id: one.id, name: "rvpn-1" },
      pool: "10.99.1.0/24",
      dns: ["192.168.61.53", "9.9.9.9"],
      subnets: ["192.168.61.0/24"],
      serverId: "remote-vpn.tern.invalid",
    });
    expect(res.body.jobIds).toHaveLength(1);
    const job = await t.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("id", "=", res.body.jobIds[0]!)
      .executeTakeFirstOrThrow();
    expect(job).toMatchObject({ device_id: one.id, type: "application", state: "queued" });

    const config = (await desiredConfig(t, one.id))!;
    const vpn = config.remoteVpn!;
    expect(vpn).toMatchObject({
      serverId: "remote-vpn.tern.invalid",
      pool: "10.99.1.0/24",
      dns: ["192.168.61.53", "9.9.9.9"],
      subnets: ["192.168.61.0/24"],
      eapUsers: [],
      certificateUsers: false,
    });
    const ca = new X509Certificate(vpn.caCertificate);
    const server = new X509Certificate(vpn.serverCertificate);
    expect(ca.ca).toBe(true);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.checkPrivateKey(createPrivateKey(vpn.serverKey))).toBe(true);
    expect(new x509.X509Crl(vpn.crl!).issuer).toBe(ca.subject);
    // The other device does not run it: nothing was compiled or queued for it.
    expect((await desiredConfig(t, two.id))?.remoteVpn).toBeUndefined();
  });

  it("bad install input: 4xx with machine codes and the param's path, nothing changed", async () => {
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ device: crypto.randomUUID(), pool: "10.99.2.0/24" }, 404, "NOT_FOUND", "params.device"],
      [{ device: two.id, pool: "192.168.62.128/25" }, 400, "VALIDATION_FAILED", "params.pool"],
      [{ device: two.id, pool: "10.99.1.128/25" }, 409, "CONFLICT", "params.pool"],
      [{ device: two.id, pool: "10.99.0.0/8" }, 400, "VALIDATION_FAILED", "params.pool"],
      [{ device: two.id, pool: "not-a-net" }, 400, "VALIDATION_FAILED", "params.pool"],
      [{ device: two.id, pool: "10.99.2.0/24", dns: "1.2.3" }, 400, "VALIDATION_FAILED", "params.dns.0"],
      [{ device: two.id, pool: "10.99.2.0/24", colour: "red" }, 400, "VALIDATION_FAILED", "params"],
      [{ device: "x", pool: "10.99.2.0/24" }, 400, "VALIDATION_FAILED", "params.device"],
    ];
    for (const [params, status, code, path] of cases) {
      const res = await run({ action: "install", ...params });
      expect([res.status, res.body.code], JSON.stringify(params)).toEqual([status, code]);
      expect(res.body.details[0]?.path, JSON.stringify(params)).toBe(path);
    }
    expect(await t.database.db.selectFrom("app_installations").select("device_id").execute()).toEqual([{ device_id: one.id }]);
    // A device of another organization is not found (tenant-scoped).
    const other = await t.createTenant("Elsewhere");
    const foreign = await insertTestDevice(t, { name: "foreign", orgId: other.orgId });
    const res = await run({ action: "install", device: foreign.id, pool: "10.99.3.0/24" });
    expect([res.status, res.body.code]).toEqual([404, "NOT_FOUND"]);
  });

  it("addUser (EAP): the password is write-only, encrypted at rest, never audited; the router gets it", async () => {
    const password = "s3cret-Passw0rd-for-alice";
    const res = await run({ action: "addUser", name: "alice", password });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result).toEqual({ name: "alice", auth: "eap" });
    expect(res.body.jobIds).toHaveLength(1);
    expect(res.text).not.toContain(password);
    expect(res.body.app.state.users).toMatchObject([{ name: "alice", auth: "eap" }]);
    const row = await t.database.db
      .selectFrom("purchased_apps")
      .select("state")
      .where("id", "=", appId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row.state)).not.toContain(password);
    const sealed = (row.state as { eapPasswordsEnc: string }).eapPasswordsEnc;
    expect(JSON.parse(t.deps.keyring.decrypt(sealed, appSecretAad(appId)))).toEqual({ alice: password });
    const audits = await t.database.db
      .selectFrom("audit_log")
      .selectAll()
      .where("resource_id", "=", appId)
      .where("action", "=", "addUser")
      .execute();
    expect(audits).toHaveLength(1);
    expect(JSON.stringify(audits)).not.toContain(password);
    expect(audits[0]!.after).toMatchObject({ params: { name: "alice", auth: "eap", password: "[redacted]" } });
    expect((await desiredConfig(t, one.id))!.remoteVpn!.eapUsers).toEqual([{ name: "alice", password }]);

    const again = await run({ action: "addUser", name: "alice", password: "another-password" });
    expect([again.status, again.body.code, again.body.details[0]?.path]).toEqual([409, "CONFLICT", "params.name"]);
    const noPassword = await run({ action: "addUser", name: "bob", auth: "eap" });
    expect([noPassword.status, noPassword.body.details[0]?.path]).toEqual([400, "params.password"]);
    const short = await run({ action: "addUser", name: "bob", password: "short" });
    expect([short.status, short.body.details[0]?.path]).toEqual([400, "params.password"]);
    const badName = await run({ action: "addUser", name: "bob smith", password: "long-enough-pw" });
    expect([badName.status, badName.body.details[0]?.path]).toEqual([400, "params.name"]);
  });

  it("addUser (certificate): a client certificate of the CA answered once; removeUser puts it on the CRL", async () => {
    const res = await run({ action: "addUser", name: "carol@example.net", auth: "certificate" });
    expect(res.status, res.text).toBe(200);
    const result = res.body.result as { certificate: string; privateKey: string; ca: string };
    const cert = new X509Certificate(result.certificate);
    expect(cert.subject).toBe("CN=carol@example.net");
    expect(cert.checkIssued(new X509Certificate(result.ca))).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(result.privateKey))).toBe(true);
    // The server keeps no copy of the user's key.
    const row = await t.database.db
      .selectFrom("purchased_apps")
      .select("state")
      .where("id", "=", appId)
      .executeTakeFirstOrThrow();
    const keyBody = result.privateKey.split("\n")[1]!;
    expect(JSON.stringify(row.state)).not.toContain(keyBody);
    expect((await desiredConfig(t, one.id))!.remoteVpn!.certificateUsers).toBe(true);

    const removed = await get({ action: "removeUser", name: "carol@example.net" });
    expect(removed.status).toBe(200);
    expect(removed.body.jobIds).toHaveLength(1);
    const vpn = (await desiredConfig(t, one.id))!.remoteVpn!;
    expect(vpn.certificateUsers).toBe(false);
    const crl = new x509.X509Crl(vpn.crl!);
    expect(crl.entries.map((e) => e.serialNumber.toLowerCase())).toEqual([(removed.body.result as { revoked: string }).revoked]);
    expect(BigInt(`0x${crl.entries[0]!.serialNumber}`)).toBe(BigInt(`0x${cert.serialNumber}`));
    const unknown = await get({ action: "removeUser", name: "nobody" });
    expect([unknown.status, unknown.body.code, unknown.body.details[0]?.path]).toEqual([404, "NOT_FOUND", "params.name"]);
  });

  it("updateCertificate: a new server certificate from the same CA, one job per device running the VPN", async () => {
    expect(
      (await run({ action: "install", device: two.id, pool: "10.99.2.0/24", subnets: ["192.168.62.0/24", "10.62.0.0/16"] }))
        .status,
    ).toBe(200);
    const before = (await desiredConfig(t, one.id))!.remoteVpn!;
    const res = await get({ action: "updateCertificate", commonName: "vpn.example.net", validityDays: 90 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result).toMatchObject({ serverId: "vpn.example.net", devices: 2 });
    expect(res.body.jobIds).toHaveLength(2);
    const jobs = await t.database.db
      .selectFrom("jobs")
      .select(["device_id", "tasks"])
      .where("id", "in", res.body.jobIds)
      .execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([one.id, two.id].sort());
    expect(JSON.stringify(jobs[0]!.tasks)).toContain("updateCertificate");
    for (const id of [one.id, two.id]) {
      const vpn = (await desiredConfig(t, id))!.remoteVpn!;
      const cert = new X509Certificate(vpn.serverCertificate);
      expect(vpn.serverId).toBe("vpn.example.net");
      expect(cert.subjectAltName).toBe("DNS:vpn.example.net");
      expect(cert.fingerprint256).not.toBe(new X509Certificate(before.serverCertificate).fingerprint256);
      expect(vpn.caCertificate).toBe(before.caCertificate);
      expect(cert.checkPrivateKey(createPrivateKey(vpn.serverKey))).toBe(true);
    }
    expect((await desiredConfig(t, two.id))!.remoteVpn!.subnets).toEqual(["192.168.62.0/24", "10.62.0.0/16"]);
  });

  it("a viewer cannot run actions; another organization cannot see the purchase", async () => {
    const viewer = await t.addMember("viewer");
    const res = await run({ action: "addUser", name: "mallory", password: "mallory-password" }, viewer.token);
    expect([res.status, res.body.code]).toEqual([403, "FORBIDDEN"]);
    const tenant = await t.createTenant("Other tenant");
    const foreign = await run({ action: "uninstall", device: one.id }, tenant.token);
    expect([foreign.status, foreign.body.code]).toEqual([404, "NOT_FOUND"]);
    expect(
      await t.database.db.selectFrom("app_installations").select("device_id").where("device_id", "=", one.id).execute(),
    ).toHaveLength(1);
  });

  it("uninstall removes the section (the config hash is the one before install); deleting the purchase removes the rest", async () => {
    const { remoteVpn: _, ...without } = (await desiredConfig(t, one.id))!;
    const res = await run({ action: "uninstall", device: one.id });
    expect(res.status).toBe(200);
    expect(res.body.jobIds).toHaveLength(1);
    expect(await desiredConfig(t, one.id)).not.toHaveProperty("remoteVpn");
    expect(await deviceHash(one.id)).toBe(configHash(without));
    const again = await run({ action: "uninstall", device: one.id });
    expect([again.status, again.body.code]).toEqual([404, "NOT_FOUND"]);

    expect((await t.api("DELETE", `/api/appstore/purchased/${appId}`, { token: t.admin.token })).status).toBe(204);
    expect(await desiredConfig(t, two.id)).not.toHaveProperty("remoteVpn");
    const jobs = await t.database.db
      .selectFrom("jobs")
      .select("tasks")
      .where("device_id", "=", two.id)
      .where("type", "=", "application")
      .execute();
    expect(JSON.stringify(jobs)).toContain("app-remove");
    expect(await t.database.db.selectFrom("app_installations").select("id").execute()).toEqual([]);
  });
});
