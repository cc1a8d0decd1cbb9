/**
 * Spec rows GET/POST /vrrp, GET/PUT/DELETE /vrrp/{id}, GET /vrrp/status,
 * GET /vrrp/deviceVrrpInterfaces: validation (VRID unique → 409, VIP in every
 * member's LAN subnet, one L2 subnet, devices of the org, LAN interfaces),
 * member order, vrrp jobs for old and new members, and the compiled result
 * (keepalived entry, DHCP routers option = the virtual IP).
 */
import { randomUUID } from "node:crypto";
import { DeviceConfig, type DeviceVrrpInterfaces, type VrrpGroup, type VrrpGroupStatus } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestDevice, type TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { readDesiredConfig } from "../../services/desired-config-seal.ts";
import { recordVrrpStates } from "../../services/vrrp-status.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
type Changed = VrrpGroup & { jobIds: string[] };
const f = (...filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);

describe("VRRP groups", () => {
  const t = useTestServer();
  let a: TestDevice;
  let b: TestDevice;
  let c: TestDevice;
  let far: TestDevice;
  let foreign: TestDevice;
  let foreignOrg: string;

  const member = (d: TestDevice, priority = 100, extra: Record<string, unknown> = {}) => ({
    device: d.id,
    interface: d.lan.devId,
    priority,
    ...extra,
  });
  const group = (over: Record<string, unknown> = {}) => ({
    name: "lan-ha",
    virtualRouterId: 51,
    virtualIp: "192.168.90.1",
    advertIntervalMs: 100,
    devices: [member(a, 150, { trackInterfacesMandatory: [a.wan.devId] }), member(b, 100)],
    ...over,
  });
  const desired = async (id: string) => {
    return DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, id));
  };

  beforeAll(async () => {
    a = await insertTestDevice(t, { name: "ha-a", lanIp: "192.168.90.2", wanIp: "10.30.1.2" });
    b = await insertTestDevice(t, { name: "ha-b", lanIp: "192.168.90.3", wanIp: "10.30.2.2" });
    c = await insertTestDevice(t, { name: "ha-c", lanIp: "192.168.90.4", wanIp: "10.30.3.2" });
    far = await insertTestDevice(t, { name: "far", lanIp: "192.168.91.1", wanIp: "10.30.4.2" });
    const tenant = await t.createTenant("Foreign");
    foreignOrg = tenant.orgId;
    foreign = await insertTestDevice(t, { name: "foreign", lanIp: "192.168.90.9", orgId: tenant.orgId });
    // ha-a serves DHCP on the LAN: its routers option must become the virtual IP.
    await t.database.db
      .updateTable("devices")
      .set({
        dhcp: toJson([
          {
            interface: a.lan.devId,
            rangeStart: "192.168.90.100",
            rangeEnd: "192.168.90.199",
            dns: ["192.168.90.2"],
            macAssign: [],
            options: [{ option: "routers", code: 3, value: "192.168.90.2" }],
            defaultLeaseTime: 3600,
            maxLeaseTime: 7200,
          },
        ]),
      })
      .where("id", "=", a.id)
      .execute();
  });

  it("POST creates the group (members in the given order) and queues a vrrp job per member", async () => {
    const res = await t.api<Changed>("POST", "/api/vrrp", { token: t.admin.token, body: group() });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "lan-ha",
      virtualRouterId: 51,
      virtualIp: "192.168.90.1",
      preemption: true,
      acceptMode: false,
    });
    expect(res.body.devices.map((m) => [m.name, m.priority])).toEqual([
      ["ha-a", 150],
      ["ha-b", 100],
    ]);
    expect(res.body.jobIds).toHaveLength(2);
    const jobs = await t.database.db
      .selectFrom("jobs")
      .select(["device_id", "type"])
      .where("id", "in", res.body.jobIds)
      .execute();
    expect(jobs.map((j) => [j.device_id, j.type]).sort()).toEqual(
      [
        [a.id, "vrrp"],
        [b.id, "vrrp"],
      ].sort(),
    );
    const got = await t.api<VrrpGroup>("GET", `/api/vrrp/${res.body.id}`, { token: t.admin.token });
    const { jobIds: _, ...stored } = res.body;
    expect(got.body).toEqual(stored);
  });

  it("the members' desired config carries the group, and DHCP hands out the virtual IP as router", async () => {
    const configA = await desired(a.id);
    expect(configA.vrrp).toEqual([
      expect.objectContaining({
        virtualRouterId: 51,
        interface: "lan0",
        virtualIp: "192.168.90.1",
        prefix: 24,
        priority: 150,
        advertIntervalMs: 100,
        trackMandatory: ["wan0"],
      }),
    ]);
    expect(configA.dhcp[0]?.options.find((o) => o.code === 3)).toEqual({ code: 3, name: "routers", value: "192.168.90.1" });
    expect((await desired(b.id)).vrrp[0]).toMatchObject({ virtualRouterId: 51, priority: 100 });
    expect(await readDesiredConfig(t.database.db, t.deps.keyring, c.id)).toBeNull();
  });

  it("refuses a used virtual router id with 409 CONFLICT", async () => {
    const res = await t.api<ErrorBody>("POST", "/api/vrrp", {
      token: t.admin.token,
      body: group({ name: "again", devices: [member(c)] }),
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("CONFLICT");
    expect(res.body.details[0]?.path).toBe("virtualRouterId");
  });

  it("validates the virtual IP, the subnet, the devices and the interfaces", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ virtualIp: "192.168.91.1" }, "virtualIp"],
      [{ virtualIp: "192.168.90.2" }, "virtualIp"],
      [{ virtualIp: "192.168.90.150" }, "virtualIp"],
      [{ virtualIp: "192.168.90.255" }, "virtualIp"],
      [{ devices: [member(a), member(far)] }, "devices.1.interface"],
      [{ devices: [member(a), member(foreign)] }, "devices.1.device"],
      [{ devices: [member(a), { device: randomUUID(), interface: "x" }] }, "devices.1.device"],
      [{ devices: [member(a), { ...member(b), interface: b.wan.devId }] }, "devices.1.interface"],
      [{ devices: [member(a), member(b, 100, { trackInterfacesOptional: ["nope"] })] }, "devices.1.trackInterfacesOptional.0"],
      [{ devices: [member(a), member(a)] }, "devices.1.device"],
      [{ virtualRouterId: 0 }, "virtualRouterId"],
      [{ virtualRouterId: 256 }, "virtualRouterId"],
      [{ devices: [] }, "devices"],
      [{ advertIntervalMs: 15 }, "advertIntervalMs"],
    ];
    for (const [over, path] of cases) {
      const res = await t.api<ErrorBody>("POST", "/api/vrrp", {
        token: t.admin.token,
        body: group({ virtualRouterId: 60, ...over }),
      });
      expect(res.status, `${JSON.stringify(over)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    const count = await t.database.db.selectFrom("vrrp_groups").select("id").execute();
    expect(count).toHaveLength(1);
  });

  it("PUT replaces members: the one that left and the one that joined get jobs; the leaver's config drops the group", async () => {
    const list = await t.api<VrrpGroup[]>("GET", "/api/vrrp", { token: t.admin.token });
    const id = list.body[0]!.id;
    const res = await t.api<Changed>("PUT", `/api/vrrp/${id}`, {
      token: t.admin.token,
      body: group({ name: "lan-ha v2", devices: [member(c, 200), member(a, 150)] }),
    });
    expect(res.status).toBe(200);
    expect(res.body.devices.map((m) => m.name)).toEqual(["ha-c", "ha-a"]);
    const jobs = await t.database.db.selectFrom("jobs").select("device_id").where("id", "in", res.body.jobIds).execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect((await desired(b.id)).vrrp).toEqual([]);
    expect((await desired(c.id)).vrrp[0]).toMatchObject({ priority: 200, virtualIp: "192.168.90.1" });
    // Keeping its own virtual router id is not a conflict; taking another group's is.
    const other = await t.api<Changed>("POST", "/api/vrrp", {
      token: t.admin.token,
      body: group({ name: "second", virtualRouterId: 52, virtualIp: "192.168.90.5", devices: [member(b)] }),
    });
    expect(other.status).toBe(201);
    const clash = await t.api<ErrorBody>("PUT", `/api/vrrp/${other.body.id}`, {
      token: t.admin.token,
      body: group({ name: "second", virtualRouterId: 51, virtualIp: "192.168.90.5", devices: [member(b)] }),
    });
    expect(clash.status).toBe(409);
    expect((await t.api("PUT", `/api/vrrp/${randomUUID()}`, { token: t.admin.token, body: group() })).status).toBe(404);
  });

  it("lists with sort, order, filters and paging", async () => {
    const list = (query: Record<string, string | number>) =>
      t.api<VrrpGroup[]>("GET", "/api/vrrp", { token: t.admin.token, query });
    const all = await list({});
    expect(all.headers.get("records-total")).toBe("2");
    expect(all.body.map((g) => g.virtualRouterId)).toEqual([51, 52]);
    expect((await list({ sort: "virtualRouterId", order: "desc" })).body.map((g) => g.virtualRouterId)).toEqual([52, 51]);
    expect((await list({ sort: "name", limit: 1, offset: 1 })).body.map((g) => g.name)).toEqual(["second"]);
    expect((await list({ filter: f({ key: "virtualRouterId", op: ">=", val: 52 }) })).body.map((g) => g.name)).toEqual([
      "second",
    ]);
    expect((await list({ filter: f({ key: "name", op: "contains", val: "HA" }) })).body.map((g) => g.name)).toEqual([
      "lan-ha v2",
    ]);
    expect((await list({ filter: f({ key: "virtualIp", op: "!=", val: "192.168.90.1" }) })).body).toHaveLength(1);
    expect((await list({ filter: f({ key: "preemption", op: "==", val: true }) })).body).toHaveLength(2);
  });

  it("GET /vrrp/status: unknown until a member reports; reported states while connected", async () => {
    const status = async () =>
      (await t.api<VrrpGroupStatus[]>("GET", "/api/vrrp/status", { token: t.admin.token, query: { sort: "virtualRouterId" } }))
        .body;
    const before = await status();
    expect(before[0]?.devices.map((m) => [m.name, m.state, m.isConnected])).toEqual([
      ["ha-c", "unknown", false],
      ["ha-a", "unknown", false],
    ]);
    const groupId = before[0]!.id;
    const ctx = { db: t.database.db, org: { id: t.admin.orgId } };
    await t.database.db.updateTable("devices").set({ connection: "connected" }).where("id", "in", [a.id, c.id]).execute();
    const changes = await recordVrrpStates(ctx, c.id, [
      { groupId, state: "MASTER", since: "2025-11-23T10:00:00.000Z" },
      { groupId: randomUUID(), state: "MASTER", since: null },
    ]);
    expect(changes).toEqual([{ groupId, groupName: "lan-ha v2", deviceId: c.id, from: "unknown", to: "MASTER" }]);
    await recordVrrpStates(ctx, a.id, [{ groupId, state: "BACKUP", since: null }]);
    const recorded = await t.database.db
      .selectFrom("vrrp_members")
      .select(["state_since", "state_reported_at"])
      .where("device_id", "=", a.id)
      .executeTakeFirstOrThrow();
    // The same state again: nothing changes, not even the row (status messages repeat every few seconds).
    expect(await recordVrrpStates(ctx, a.id, [{ groupId, state: "BACKUP", since: null }], new Date(Date.now() + 5000))).toEqual(
      [],
    );
    expect(
      await t.database.db
        .selectFrom("vrrp_members")
        .select(["state_since", "state_reported_at"])
        .where("device_id", "=", a.id)
        .executeTakeFirstOrThrow(),
    ).toEqual(recorded);
    const after = await status();
    expect(after[0]?.devices).toEqual([
      {
        device: c.id,
        name: "ha-c",
        interface: c.lan.devId,
        isConnected: true,
        state: "MASTER",
        since: "2025-11-23T10:00:00.000Z",
      },
      expect.objectContaining({ device: a.id, isConnected: true, state: "BACKUP" }),
    ]);
    expect(after[0]?.devices[1]?.since).not.toBeNull();
    // The other organization's device cannot report into this group.
    expect(
      await recordVrrpStates({ db: t.database.db, org: { id: foreignOrg } }, c.id, [{ groupId, state: "FAULT", since: null }]),
    ).toEqual([]);
    // A disconnected router's last report is not its state now.
    await t.database.db.updateTable("devices").set({ connection: "disconnected" }).where("id", "=", c.id).execute();
    expect((await status())[0]?.devices[0]).toMatchObject({ isConnected: false, state: "unknown", since: null });
    // A member that stops listing the group is unknown again.
    expect(await recordVrrpStates(ctx, a.id, [])).toEqual([
      { groupId, groupName: "lan-ha v2", deviceId: a.id, from: "BACKUP", to: "unknown" },
    ]);
    expect((await status())[1]?.devices).toEqual([expect.objectContaining({ name: "ha-b", state: "unknown" })]);
  });

  it("GET /vrrp/deviceVrrpInterfaces lists devices with a LAN that can carry a group", async () => {
    // A device whose only LAN is a DHCP client cannot carry one.
    const dhcpOnly = await insertTestDevice(t, { name: "dhcp-lan" });
    await t.database.db
      .updateTable("devices")
      .set({ interfaces: toJson([dhcpOnly.wan, { ...dhcpOnly.lan, dhcp: true, IPv4: "", IPv4Mask: null }]) })
      .where("id", "=", dhcpOnly.id)
      .execute();
    const res = await t.api<DeviceVrrpInterfaces[]>("GET", "/api/vrrp/deviceVrrpInterfaces", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("4");
    expect(res.body.map((d) => d.name)).toEqual(["far", "ha-a", "ha-b", "ha-c"]);
    expect(res.body[1]).toEqual({
      device: a.id,
      name: "ha-a",
      interfaces: [{ devId: a.lan.devId, name: "lan0", IPv4: "192.168.90.2", IPv4Mask: 24 }],
    });
    const filtered = await t.api<DeviceVrrpInterfaces[]>("GET", "/api/vrrp/deviceVrrpInterfaces", {
      token: t.admin.token,
      query: { filter: f({ key: "name", op: "contains", val: "ha-" }), sort: "name", order: "desc", limit: 2 },
    });
    expect(filtered.headers.get("records-total")).toBe("3");
    expect(filtered.body.map((d) => d.name)).toEqual(["ha-c", "ha-b"]);
  });

  it("DELETE removes the group, queues jobs for its members and takes the group out of their config", async () => {
    const list = await t.api<VrrpGroup[]>("GET", "/api/vrrp", {
      token: t.admin.token,
      query: { filter: f({ key: "virtualRouterId", op: "==", val: 51 }) },
    });
    const id = list.body[0]!.id;
    const res = await t.api<{ jobIds: string[] }>("DELETE", `/api/vrrp/${id}`, { token: t.admin.token });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(2);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds.join(",")}`);
    expect((await desired(a.id)).vrrp).toEqual([]);
    expect((await desired(a.id)).dhcp[0]?.options.find((o) => o.code === 3)?.value).toBe("192.168.90.2");
    expect((await t.api("GET", `/api/vrrp/${id}`, { token: t.admin.token })).status).toBe(404);
    const members = await t.database.db.selectFrom("vrrp_members").select("group_id").where("group_id", "=", id).execute();
    expect(members).toEqual([]);
  });
});
