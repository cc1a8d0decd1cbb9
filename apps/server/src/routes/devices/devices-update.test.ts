/** PUT /api/devices/{id}: merge, validation, LAN overlap, approval, jobs for the device and its dependents, atomicity. */
import { randomUUID } from "node:crypto";
import { configHash, type Device, DeviceConfig, type Job } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestTunnel, insertTestVrrpGroup, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { readDesiredConfig } from "../../services/desired-config-seal.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };
type Accepted = { jobIds: string[] };

describe("PUT /api/devices/{id}", () => {
  const t = useTestServer();

  const put = <T = Device>(id: string, body: unknown, query: Record<string, string> = {}) =>
    t.api<T>("PUT", `/api/devices/${id}`, { token: t.admin.token, body, query });
  const get = async (id: string) => (await t.api<Device>("GET", `/api/devices/${id}`, { token: t.admin.token })).body;
  const jobsOf = (deviceId: string) =>
    t.database.db.selectFrom("jobs").selectAll().where("device_id", "=", deviceId).orderBy("created_at").execute();
  /** An approved device whose desired config is compiled and stored (its first job queued). */
  async function configured(options: Parameters<typeof insertValidDevice>[1] = {}): Promise<TestDevice> {
    const device = await insertValidDevice(t, { ...options, approved: false });
    const res = await put<Accepted>(device.id, { isApproved: true });
    if (res.status !== 202) throw new Error(`approval failed: ${res.status} ${res.text}`);
    return device;
  }

  it("approving a device answers 202 with the job of its whole config; Location lists the job", async () => {
    const device = await insertValidDevice(t, { approved: false });
    const res = await put<Accepted>(device.id, { isApproved: true });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(1);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds[0]}`);
    const listed = await t.api<Job[]>("GET", res.headers.get("location")!, { token: t.admin.token });
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({
      id: res.body.jobIds[0],
      type: "modify",
      state: "queued",
      device: { id: device.id, name: device.name, hostname: device.name },
      tasks: [{ kind: "approve-device" }],
      createdBy: t.admin.email,
    });
    const row = await t.database.db
      .selectFrom("devices")
      .select(["is_approved", "desired_hash"])
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(row.is_approved).toBe(true);
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, device.id));
    expect(configHash(config)).toBe(row.desired_hash);
    expect(config.interfaces.map((i) => i.name).sort()).toEqual(["lan0", "wan0"]);
    expect(listed.body[0]!.targetHash).toBe(row.desired_hash);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "before", "after"])
      .where("resource_id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(audit.action).toBe("approve");
    expect(audit.before).toMatchObject({ isApproved: false });
    expect(audit.after).toMatchObject({ isApproved: true });
  });

  it("answers 200 with the device when nothing a device runs changed; an unapproved device gets no job", async () => {
    const device = await configured();
    const res = await put(device.id, { description: "rack 4" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: device.id, description: "rack 4", isApproved: true });
    expect(await jobsOf(device.id)).toHaveLength(1);

    const waiting = await insertValidDevice(t, { approved: false });
    const renamed = await put(waiting.id, { name: "waiting-room" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("waiting-room");
    expect(await jobsOf(waiting.id)).toEqual([]);
  });

  it("sending back the device from GET changes nothing (read-only fields are ignored)", async () => {
    const device = await configured();
    const before = await get(device.id);
    const res = await put(device.id, before);
    expect(res.status).toBe(200);
    expect({ ...res.body, updatedAt: before.updatedAt }).toEqual(before);
  });

  it("interfaces are matched by devId and change only the fields the entry names", async () => {
    const device = await configured();
    const res = await put<Accepted>(device.id, {
      interfaces: [
        { devId: device.lan.devId, name: "lan-office", mtu: 1400, PublicIP: "1.2.3.4", isPublicAddressRateLimited: true },
      ],
    });
    expect(res.status).toBe(202);
    const after = await get(device.id);
    expect(after.interfaces[0]).toEqual(device.wan);
    expect(after.interfaces[1]).toEqual({ ...device.lan, name: "lan-office", mtu: 1400 });
    const jobs = await jobsOf(device.id);
    expect(jobs.at(-1)?.tasks).toEqual([{ kind: "modify-device", summary: `${device.name}: interfaces changed` }]);
  });

  it("refuses unknown devIds, a wrong interface id and the same devId twice", async () => {
    const device = await configured();
    const cases: [unknown[], string][] = [
      [[{ devId: "mac:ff:ff:ff:ff:ff:ff", name: "ghost" }], "interfaces.0.devId"],
      [[{ devId: device.lan.devId, name: "lan0", id: randomUUID() }], "interfaces.0.id"],
      [
        [
          { devId: device.lan.devId, name: "lan0" },
          { devId: device.lan.devId, name: "lan1" },
        ],
        "interfaces.1.devId",
      ],
    ];
    for (const [interfaces, path] of cases) {
      const res = await put<ErrorBody>(device.id, { interfaces });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
  });

  it("validation catches what a router would reject, with codes and body paths, and stores nothing", async () => {
    const device = await configured();
    const lanNet = device.lan.IPv4.replace(/\.1$/, "");
    const cases: [string, unknown, string][] = [
      [
        "gateway outside the interface subnet",
        {
          interfaces: [
            {
              devId: device.wan.devId,
              name: "wan0",
              type: "WAN",
              isAssigned: true,
              IPv4: device.wan.IPv4,
              IPv4Mask: 24,
              gateway: "192.0.2.1",
            },
          ],
        },
        "interfaces.0.gateway",
      ],
      [
        "DHCP range outside the LAN",
        { dhcp: [{ interface: device.lan.devId, rangeStart: "10.250.0.10", rangeEnd: "10.250.0.20" }] },
        "dhcp.0.rangeStart",
      ],
      [
        "DHCP default lease above max",
        {
          dhcp: [
            {
              interface: device.lan.devId,
              rangeStart: `${lanNet}.10`,
              rangeEnd: `${lanNet}.20`,
              defaultLeaseTime: 9000,
              maxLeaseTime: 7200,
            },
          ],
        },
        "dhcp.0.defaultLeaseTime",
      ],
      [
        "duplicate routes",
        {
          staticRoutes: [
            { destination: "172.16.0.0/16", gateway: device.wan.gateway },
            { destination: "172.16.0.0/16", gateway: device.wan.gateway },
          ],
        },
        "staticRoutes.1",
      ],
      [
        "LAN NAT prefixes of different length",
        {
          firewall: {
            rules: [{ direction: "lanNat", interface: device.lan.devId, source: `${lanNet}.0/24`, translated: "10.99.0.0/25" }],
          },
        },
        "firewall.rules.0.translated",
      ],
      [
        "an interface subnet inside the tunnel range",
        {
          interfaces: [
            { devId: device.lan.devId, name: "lan0", type: "LAN", isAssigned: true, IPv4: "10.100.7.1", IPv4Mask: 24 },
          ],
        },
        "interfaces.0.IPv4",
      ],
      [
        "an unknown path label",
        { interfaces: [{ devId: device.wan.devId, name: "wan0", pathlabels: [randomUUID()] }] },
        "interfaces.0.pathlabels.0",
      ],
      ["an unknown multi-link policy", { policies: { multilink: randomUUID() } }, "policies.multilink"],
      ["a name that is blank", { name: "   " }, "name"],
    ];
    const before = await get(device.id);
    const audits = async () =>
      (await t.database.db.selectFrom("audit_log").select("id").where("resource_id", "=", device.id).execute()).length;
    const auditCount = await audits();
    for (const [label, body, path] of cases) {
      const res = await put<ErrorBody>(device.id, body);
      expect(res.status, label).toBe(400);
      expect(res.body.code, label).toBe("VALIDATION_FAILED");
      expect(
        res.body.details.map((d) => d.path),
        `${label}: ${res.text}`,
      ).toContain(path);
    }
    expect(await get(device.id)).toEqual(before);
    expect(await audits()).toBe(auditCount);
    expect(await jobsOf(device.id)).toHaveLength(1);
  });

  it("a LAN overlapping another device's LAN is LAN_OVERLAPPING naming it, unless allowOverlapping=true", async () => {
    const a = await configured({ name: "site-a", lanIp: "10.201.0.1" });
    const b = await configured({ name: "site-b", lanIp: "10.202.0.1" });
    const body = {
      interfaces: [{ devId: b.lan.devId, name: "lan0", type: "LAN", isAssigned: true, IPv4: "10.201.0.2", IPv4Mask: 24 }],
    };
    const refused = await put<ErrorBody>(b.id, body);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("LAN_OVERLAPPING");
    expect(refused.body.details[0]).toMatchObject({ path: "interfaces.0.IPv4" });
    expect(refused.body.error).toContain("site-a");
    expect((await get(b.id)).interfaces[1]!.IPv4).toBe("10.202.0.1");
    const explicitFalse = await put<ErrorBody>(b.id, body, { allowOverlapping: "false" });
    expect(explicitFalse.body.code).toBe("LAN_OVERLAPPING");
    const badFlag = await put<ErrorBody>(b.id, body, { allowOverlapping: "yes" });
    expect(badFlag.status).toBe(400);
    expect(badFlag.body.details[0]?.path).toBe("allowOverlapping");

    const allowed = await put<Accepted>(b.id, body, { allowOverlapping: "true" });
    expect(allowed.status).toBe(202);
    expect((await get(b.id)).interfaces[1]!.IPv4).toBe("10.201.0.2");
    expect((await get(a.id)).interfaces[1]!.IPv4).toBe("10.201.0.1");
    // An overlap accepted once does not block later edits of either device; a new one is refused again.
    expect((await put(b.id, { description: "overlap accepted" })).status).toBe(200);
    expect((await put(a.id, { description: "other side" })).status).toBe(200);
    const c = await configured({ name: "site-c", lanIp: "10.203.0.1" });
    const third = await put<ErrorBody>(c.id, {
      interfaces: [{ devId: c.lan.devId, name: "lan0", IPv4: "10.201.0.3", IPv4Mask: 24 }],
    });
    expect(third.body.code).toBe("LAN_OVERLAPPING");
    expect(third.body.details).toHaveLength(2);
  });

  it("queues modify jobs for the far ends of the device's tunnels when their config reads the change", async () => {
    const a = await configured({ name: "hub" });
    const b = await configured({ name: "spoke" });
    const tunnel = await insertTestTunnel(t, a, b, { num: 7 });
    const newIp = a.wan.IPv4.replace(/\.2$/, ".3");
    const res = await put<Accepted>(a.id, {
      interfaces: [{ devId: a.wan.devId, name: "wan0", IPv4: newIp }],
    });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(2);
    const jobs = await t.api<Job[]>("GET", res.headers.get("location")!, { token: t.admin.token });
    expect(jobs.body.map((j) => j.device.name).sort()).toEqual(["hub", "spoke"]);
    expect(jobs.body.find((j) => j.device.id === b.id)?.tasks[0]).toMatchObject({ kind: "peer-device-changed" });
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, b.id));
    expect(config.tunnels.find((x) => x.id === tunnel.id)?.remoteAddress).toBe(newIp);
  });

  it("an interface carrying a tunnel must stay an assigned WAN", async () => {
    const a = await configured({ name: "tun-a" });
    const b = await configured({ name: "tun-b" });
    await insertTestTunnel(t, a, b, { num: 8 });
    const res = await put<ErrorBody>(a.id, { interfaces: [{ devId: a.wan.devId, name: "wan0", type: "LAN" }] });
    expect(res.status).toBe(400);
    expect(res.body.details.some((d) => d.path === "interfaces.0" && d.message.includes("tunnel 8 to device tun-b"))).toBe(true);
  });

  it("a change that breaks the device's VRRP group is refused naming the group", async () => {
    const a = await configured({ name: "vrrp-a", lanIp: "10.210.0.2" });
    const b = await configured({ name: "vrrp-b", lanIp: "10.210.0.3" });
    await insertTestVrrpGroup(t, { name: "office-gw", virtualRouterId: 12, virtualIp: "10.210.0.1", members: [a, b] });
    // The pair shares one segment on purpose: not a LAN overlap. (202: the group, inserted directly, enters a's config now.)
    expect((await put(a.id, { description: "primary" })).status).toBe(202);
    const res = await put<ErrorBody>(a.id, {
      interfaces: [{ devId: a.lan.devId, name: "lan0", IPv4: "10.211.0.2" }],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details.some((d) => d.message.startsWith("VRRP group office-gw:"))).toBe(true);
  });

  it("needs put permission on devices: a viewer is refused, a manager may", async () => {
    const device = await configured();
    const viewer = await t.addMember("viewer");
    const manager = await t.addMember("manager");
    expect((await t.api("PUT", `/api/devices/${device.id}`, { token: viewer.token, body: { description: "v" } })).status).toBe(
      403,
    );
    expect((await t.api("PUT", `/api/devices/${device.id}`, { token: manager.token, body: { description: "m" } })).status).toBe(
      200,
    );
    expect((await t.api("PUT", `/api/devices/${randomUUID()}`, { token: manager.token, body: {} })).status).toBe(404);
  });
});
