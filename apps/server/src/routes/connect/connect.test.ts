/** POST /api/connect/register: onboarding with a registration token; the device-token hooks the gateway uses. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Device, RegisterRequest, RegisterResponse } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { signedRegistration } from "../../../test/support/signed-registration.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";
import { admitDevice, deviceByToken } from "../../services/devices/auth.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, "../../../../../packages/protocol/fixtures/v1/RegisterRequest", name), "utf8"),
  );

const signed = signedRegistration;

let machines = 0;
const edge = (token: string, overrides: Partial<RegisterRequest> = {}): RegisterRequest =>
  signed({
    ...edgeFacts(token),
    ...overrides,
  });

const edgeFacts = (token: string): Omit<RegisterRequest, "identity"> => ({
  token,
  machineId: `4c4c4544-0042-4a10-8051-${String(++machines).padStart(12, "0")}`,
  hostname: "edge-a",
  interfaces: [
    {
      devId: "pci:0000:00:03.0",
      name: "eth0",
      mac: "02:00:00:00:0a:01",
      deviceType: "ethernet",
      IPv4: "203.0.113.10",
      IPv4Mask: 24,
      gateway: "203.0.113.1",
      dhcp: false,
    },
    {
      devId: "pci:0000:00:04.0",
      name: "eth1",
      mac: "02:00:00:00:0a:02",
      deviceType: "ethernet",
      IPv4: "192.168.50.1",
      IPv4Mask: 24,
      gateway: "",
      dhcp: false,
    },
    { devId: "usb:1-1", name: "wwan0", mac: "", deviceType: "lte", IPv4: "", IPv4Mask: null, gateway: "", dhcp: true },
  ],
  versions: { agent: "0.1.0", protocol: 2 },
});

describe("device registration", () => {
  const t = useTestServer();

  async function registrationToken(orgId?: string): Promise<string> {
    const res = await t.api<{ token: string }>("POST", "/api/tokens", {
      token: t.admin.token,
      query: { org: orgId },
      body: { name: `rollout-${Math.random()}` },
    });
    if (res.status !== 201) throw new Error(res.text);
    return res.body.token;
  }

  const register = (body: unknown) => t.api<RegisterResponse>("POST", "/api/connect/register", { body });
  const getDevice = (id: string, org?: string) =>
    t.api<Device>("GET", `/api/devices/${id}`, { token: t.admin.token, query: { org } });

  it("creates the device unapproved in the token's organization, with its interfaces, and a device token stored hashed", async () => {
    const body = edge(await registrationToken());
    const res = await register(body);
    expect(res.status).toBe(201);
    expect(res.body.isApproved).toBe(false);
    expect(res.body.deviceToken).toMatch(/^tern_dev_[A-Za-z0-9_-]{43}$/);

    const device = (await getDevice(res.body.deviceId)).body;
    expect(device).toMatchObject({
      org: t.admin.orgId,
      name: "edge-a",
      hostname: "edge-a",
      machineId: body.machineId,
      isApproved: false,
      connection: "never",
      isConnected: false,
      versions: { agent: "0.1.0", protocol: 2 },
      pendingNotifications: 0,
      desiredHash: null,
      appliedHash: null,
    });
    expect(device.interfaces.map((i) => [i.devId, i.name, i.type, i.isAssigned, i.IPv4, i.deviceType, i.dhcp])).toEqual([
      ["pci:0000:00:03.0", "eth0", "WAN", false, "203.0.113.10", "ethernet", false],
      ["pci:0000:00:04.0", "eth1", "NONE", false, "192.168.50.1", "ethernet", false],
      ["usb:1-1", "wwan0", "NONE", false, "", "lte", true],
    ]);
    for (const iface of device.interfaces) expect(iface.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(device.interfaces.map((i) => i.id)).size).toBe(3);

    const row = await t.database.db
      .selectFrom("devices")
      .select("device_token_hash")
      .where("id", "=", res.body.deviceId)
      .executeTakeFirstOrThrow();
    expect(row.device_token_hash).toBe(hashSecretToken(res.body.deviceToken));
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "actor", "organization_id"])
      .where("resource_id", "=", res.body.deviceId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: "register", organization_id: t.admin.orgId });
    expect(audit.actor).toMatch(/^registration:rollout-/);
    // No job for a device nobody approved.
    expect(await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", res.body.deviceId).execute()).toEqual([]);
  });

  it("re-registering the same machine rotates the token, refreshes what was discovered and keeps the admin's settings and approval", async () => {
    const token = await registrationToken();
    const first = edge(token, { hostname: "edge-b" });
    const created = (await register(first)).body;
    const device = (await getDevice(created.deviceId)).body;
    const [wan, lan, lte] = device.interfaces;
    // The admin assigns the WAN and LAN and approves.
    const put = await t.api("PUT", `/api/devices/${created.deviceId}`, {
      token: t.admin.token,
      body: {
        name: "Branch B",
        isApproved: true,
        interfaces: [
          { devId: wan!.devId, name: "eth0", type: "WAN", isAssigned: true, metric: 5 },
          { devId: lan!.devId, name: "eth1", type: "LAN", isAssigned: true },
        ],
      },
    });
    expect(put.status).toBe(202);

    const again = await register(
      signed({
        ...first,
        hostname: "edge-b-renamed",
        versions: { agent: "0.2.0", protocol: 1 },
        interfaces: [
          // The WAN now reports another address: the admin's static settings stay.
          { ...first.interfaces[0]!, IPv4: "203.0.113.99" },
          { ...first.interfaces[1]! },
          // The unassigned LTE modem reports an address: refreshed. A new NIC appears.
          { ...first.interfaces[2]!, IPv4: "100.64.1.2", IPv4Mask: 30, gateway: "100.64.1.1" },
          {
            devId: "pci:0000:00:05.0",
            name: "eth2",
            mac: "",
            deviceType: "ethernet",
            IPv4: "",
            IPv4Mask: null,
            gateway: "",
            dhcp: true,
          },
        ],
      }),
    );
    expect(again.status).toBe(200);
    expect(again.body.deviceId).toBe(created.deviceId);
    expect(again.body.isApproved).toBe(true);
    expect(again.body.deviceToken).not.toBe(created.deviceToken);

    const after = (await getDevice(created.deviceId)).body;
    expect(after).toMatchObject({ name: "Branch B", hostname: "edge-b-renamed", isApproved: true, versions: { agent: "0.2.0" } });
    expect(after.interfaces).toHaveLength(4);
    expect(after.interfaces[0]).toEqual({ ...wan, type: "WAN", isAssigned: true, metric: 5 });
    expect(after.interfaces[1]).toMatchObject({ id: lan!.id, type: "LAN", isAssigned: true });
    expect(after.interfaces[2]).toMatchObject({ id: lte!.id, IPv4: "100.64.1.2", gateway: "100.64.1.1", type: "WAN" });
    expect(after.interfaces[3]).toMatchObject({ devId: "pci:0000:00:05.0", type: "NONE", isAssigned: false });
    const count = await t.database.db
      .selectFrom("devices")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("machine_id", "=", first.machineId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);

    // The old device token stops working; the new one identifies the device.
    expect(await deviceByToken(t.database.db, created.deviceToken)).toBeNull();
    expect(await deviceByToken(t.database.db, again.body.deviceToken)).toMatchObject({
      id: created.deviceId,
      isApproved: true,
      org: { id: t.admin.orgId },
    });
  });

  it("the same machine in another organization is another device", async () => {
    const other = await t.api<{ id: string }>("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name: "Second org" },
    });
    const body = edge(await registrationToken());
    const inFirst = (await register(body)).body;
    const inSecond = await register({ ...body, token: await registrationToken(other.body.id) });
    expect(inSecond.status).toBe(201);
    expect(inSecond.body.deviceId).not.toBe(inFirst.deviceId);
    expect((await getDevice(inSecond.body.deviceId, other.body.id)).body.org).toBe(other.body.id);
    expect((await getDevice(inSecond.body.deviceId)).status).toBe(404);
  });

  it("a bad registration token is 401 with the error body, and nothing is created", async () => {
    for (const token of ["tern_reg_wrong", "x"]) {
      const body = edge(token);
      const res = await t.api<ErrorBody>("POST", "/api/connect/register", { body });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: "UNAUTHENTICATED", error: "unknown registration token", details: [] });
      const rows = await t.database.db.selectFrom("devices").select("id").where("machine_id", "=", body.machineId).execute();
      expect(rows).toEqual([]);
    }
  });

  it("validates the request (fixtures of the protocol)", async () => {
    const invalid = fixture("invalid-short-machine-id.json");
    const res = await t.api<ErrorBody>("POST", "/api/connect/register", { body: invalid.value });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details.map((d) => d.path)).toContain(invalid.expectPath);

    // The fixture's proof was signed long ago: signed anew (the server wants it within 5 minutes).
    const valid = signed({ ...fixture("valid-edge.json"), token: await registrationToken() });
    expect((await register(valid)).status).toBe(201);

    const noInterfacesArray = await t.api<ErrorBody>("POST", "/api/connect/register", {
      body: { ...edge("x"), interfaces: "eth0" },
    });
    expect(noInterfacesArray.body.details[0]?.path).toBe("interfaces");
    const badAddress = await t.api<ErrorBody>("POST", "/api/connect/register", {
      body: edge("x", { interfaces: [{ ...edge("x").interfaces[0]!, IPv4: "300.1.1.1" }] }),
    });
    expect(badAddress.body.details[0]?.path).toBe("interfaces.0.IPv4");
  });

  it("admitDevice: unknown tokens and unapproved devices are refused with a reason; approved ones admitted", async () => {
    const res = (await register(edge(await registrationToken(), { hostname: "edge-wait" }))).body;
    expect(await admitDevice(t.database.db, "tern_dev_nope")).toMatchObject({ ok: false, reason: "unknown-token" });
    expect(await admitDevice(t.database.db, "not even a device token")).toMatchObject({ ok: false, reason: "unknown-token" });
    const waiting = await admitDevice(t.database.db, res.deviceToken);
    expect(waiting).toMatchObject({ ok: false, reason: "not-approved" });
    expect(!waiting.ok && waiting.message).toContain("waiting for approval");
    await t.api("PUT", `/api/devices/${res.deviceId}`, { token: t.admin.token, body: { isApproved: true } });
    expect(await admitDevice(t.database.db, res.deviceToken)).toMatchObject({ ok: true, device: { id: res.deviceId } });
  });
});

describe("device registration rate limit", () => {
  const t = useTestServer({ TERN_REGISTER_RATE_IP: "3", TERN_TRUST_PROXY: "true" });

  it("limits registrations per client IP with 429 and Retry-After; other addresses are not affected", async () => {
    const token = (await t.api<{ token: string }>("POST", "/api/tokens", { token: t.admin.token, body: { name: "rl" } })).body
      .token;
    const from = (ip: string, body: unknown) =>
      t.api<ErrorBody>("POST", "/api/connect/register", { body, headers: { "x-forwarded-for": ip } });
    expect((await from("198.51.100.1", edge(token))).status).toBe(201);
    expect((await from("198.51.100.1", edge("tern_reg_bad"))).status).toBe(401);
    expect((await from("198.51.100.1", edge(token))).status).toBe(201);
    const limited = await from("198.51.100.1", edge(token));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await from("198.51.100.2", edge(token))).status).toBe(201);
  });
});
