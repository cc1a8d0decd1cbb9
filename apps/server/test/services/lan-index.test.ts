/**
 * The indexed LAN overlap check (services/lan-index) against the full scan it
 * replaces: for overlapping, nested, containing, adjacent and disjoint
 * subnets, IPv4 edges (/32, /31, /1, the top of the address space), LAN NAT
 * published prefixes (host bits set), interfaces that do not count (WAN,
 * unassigned, DHCP) and an overlap accepted earlier, the index's answer equals
 * `checkLanOverlap` against every other device of the organization, in the
 * same order. Also: the side table follows writes, and the migration's
 * backfill writes what the service writes.
 */
import { randomUUID } from "node:crypto";
import type { DeviceInterface, Firewall, FirewallRule } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { down as migrateDown, up as migrateUp } from "../../src/db/migrations/20261125-601-lan-overlap-index.ts";
import * as jobsGroupColumn from "../../src/db/migrations/20261202-101-jobs-group-column.ts";
import { newLanOverlaps, newProblems } from "../../src/services/lan-index/check.ts";
import { syncLanIndex } from "../../src/services/lan-index/store.ts";
import type { OverlapDevice } from "../../src/validate/index.ts";
import { insertTestDevice, type TestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

type Iface = { ip: string; mask: number; type?: "LAN" | "WAN"; assigned?: boolean; dhcp?: boolean };
interface Shape {
  name: string;
  lans: Iface[];
  rules?: FirewallRule[];
}

const nat = (iface: string, source: string, translated: string): FirewallRule => ({
  direction: "lanNat",
  description: "",
  enabled: true,
  interface: iface,
  source,
  translated,
});

/** The organization's other devices: every relation to the probes below occurs at least once. */
const FLEET: Shape[] = [
  { name: "base-24", lans: [{ ip: "10.1.0.1", mask: 24 }] },
  { name: "nested-25", lans: [{ ip: "10.1.0.129", mask: 25 }] },
  { name: "container-8", lans: [{ ip: "10.0.0.1", mask: 8 }] },
  { name: "adjacent-24", lans: [{ ip: "10.1.1.1", mask: 24 }] },
  { name: "disjoint", lans: [{ ip: "192.168.5.1", mask: 24 }] },
  { name: "host-32", lans: [{ ip: "1.2.3.4", mask: 32 }] },
  { name: "top-31", lans: [{ ip: "255.255.255.254", mask: 31 }] },
  {
    name: "two-lans",
    lans: [
      { ip: "172.16.0.1", mask: 12 },
      { ip: "192.168.9.1", mask: 24 },
    ],
  },
  {
    name: "same-twice",
    lans: [
      { ip: "10.1.0.2", mask: 24 },
      { ip: "10.1.0.3", mask: 24 },
    ],
  },
  { name: "natted", lans: [{ ip: "192.168.50.1", mask: 24 }], rules: [nat("LAN0", "192.168.50.0/24", "100.70.0.0/24")] },
  { name: "natted-half", lans: [{ ip: "192.168.60.1", mask: 24 }], rules: [nat("LAN0", "192.168.60.0/25", "100.80.0.5/25")] },
  { name: "wan-only", lans: [{ ip: "10.1.0.7", mask: 24, type: "WAN" }] },
  { name: "unassigned", lans: [{ ip: "10.1.0.8", mask: 24, assigned: false }] },
  { name: "dhcp", lans: [{ ip: "10.1.0.9", mask: 24, dhcp: true }] },
];

/** The changes checked: the probe device's LAN interfaces and rules after the change. */
const PROBES: Shape[] = [
  { name: "same subnet", lans: [{ ip: "10.1.0.50", mask: 24 }] },
  { name: "nested /30 inside two", lans: [{ ip: "10.1.0.201", mask: 30 }] },
  { name: "container /16", lans: [{ ip: "10.1.0.1", mask: 16 }] },
  { name: "inside the /8 only", lans: [{ ip: "10.200.0.1", mask: 24 }] },
  { name: "disjoint", lans: [{ ip: "192.168.6.1", mask: 24 }] },
  { name: "host /32 on a host", lans: [{ ip: "1.2.3.4", mask: 32 }] },
  { name: "top /32", lans: [{ ip: "255.255.255.255", mask: 32 }] },
  { name: "lower half /1", lans: [{ ip: "0.0.0.1", mask: 1 }] },
  { name: "upper half /1", lans: [{ ip: "128.0.0.1", mask: 1 }] },
  {
    name: "two LANs",
    lans: [
      { ip: "172.20.0.1", mask: 16 },
      { ip: "192.168.50.7", mask: 24 },
    ],
  },
  {
    name: "NAT onto a published prefix",
    lans: [{ ip: "192.168.70.1", mask: 24 }],
    rules: [nat("LAN0", "192.168.70.0/24", "100.70.0.0/24")],
  },
  {
    name: "NAT with host bits",
    lans: [{ ip: "192.168.71.1", mask: 24 }],
    rules: [nat("LAN0", "192.168.71.0/25", "100.80.0.9/25")],
  },
  { name: "NAT onto a LAN", lans: [{ ip: "192.168.72.1", mask: 24 }], rules: [nat("LAN0", "192.168.72.0/24", "192.168.5.0/24")] },
  { name: "WAN only", lans: [{ ip: "10.1.0.60", mask: 24, type: "WAN" }] },
  { name: "unassigned", lans: [{ ip: "10.1.0.61", mask: 24, assigned: false }] },
  { name: "no LAN at all", lans: [] },
];

describe("indexed LAN overlap check", () => {
  const t = useTestServer();
  let template: DeviceInterface;

  function shaped(id: string, shape: Shape): OverlapDevice & { interfaces: DeviceInterface[]; firewall: Firewall } {
    const interfaces = shape.lans.map((l, i) => ({
      ...template,
      id: randomUUID(),
      devId: `LAN${i}`,
      name: `lan${i}`,
      type: l.type ?? "LAN",
      isAssigned: l.assigned ?? true,
      dhcp: l.dhcp ?? false,
      IPv4: l.ip,
      IPv4Mask: l.mask,
    })) as DeviceInterface[];
    return { id, name: shape.name, interfaces, firewall: { rules: shape.rules ?? [] } };
  }

  async function store(device: TestDevice, shape: Shape, orgId = t.admin.orgId) {
    const d = shaped(device.id, shape);
    await t.database.db
      .updateTable("devices")
      .set({ name: shape.name, interfaces: toJson(d.interfaces), firewall: toJson(d.firewall) })
      .where("id", "=", device.id)
      .execute();
    await syncLanIndex(t.database.db, {
      id: device.id,
      organizationId: orgId,
      interfaces: d.interfaces,
      firewall: d.firewall,
    });
    return d;
  }

  async function allOthers(exceptId: string) {
    return t.database.db
      .selectFrom("devices")
      .select(["id", "name", "interfaces", "firewall"])
      .where("organization_id", "=", t.admin.orgId)
      .where("id", "!=", exceptId)
      .orderBy("id")
      .execute();
  }

  it("answers what the full scan answers, in the same order, for every case", async () => {
    const first = await insertTestDevice(t, { approved: false });
    template = first.lan;
    await store(first, FLEET[0]!);
    for (const shape of FLEET.slice(1)) await store(await insertTestDevice(t), shape);
    // A device of another organization never counts.
    const tenant = await t.createTenant("elsewhere");
    const foreign = await insertTestDevice(t, { orgId: tenant.orgId });
    await store(foreign, { name: "foreign", lans: [{ ip: "10.1.0.1", mask: 24 }] }, tenant.orgId);

    const probe = await insertTestDevice(t, { approved: false });
    const beforeShapes: Shape[] = [
      { name: "probe", lans: [{ ip: "203.0.113.1", mask: 24 }] },
      // An overlap accepted earlier (allowOverlapping=true): not blamed on the change again.
      { name: "probe", lans: [{ ip: "10.1.0.1", mask: 24 }] },
    ];
    const everyone = await allOthers(probe.id);
    expect(everyone).toHaveLength(FLEET.length);
    const answered: Record<string, number> = {};
    for (const beforeShape of beforeShapes) {
      const before = await store(probe, beforeShape);
      for (const shape of PROBES) {
        const after = shaped(probe.id, { ...shape, name: "probe" });
        const full = newProblems(before, after, everyone, []);
        const indexed = await newLanOverlaps(t.database.db, t.admin.orgId, before, after, []);
        expect(indexed, `${beforeShape.lans[0]!.ip} → ${shape.name}`).toEqual(full);
        answered[`${beforeShape.lans[0]!.ip} → ${shape.name}`] = full.length;
      }
    }
    // The cases are not vacuous: these overlap (counted by hand), these do not.
    expect(answered["203.0.113.1 → same subnet"]).toBe(5); // base, nested, container, same-twice (two interfaces)
    expect(answered["203.0.113.1 → nested /30 inside two"]).toBe(5); // the same five: .200/30 lies in 10.1.0.128/25
    expect(answered["203.0.113.1 → inside the /8 only"]).toBe(1);
    expect(answered["203.0.113.1 → lower half /1"]).toBeGreaterThan(5);
    expect(answered["203.0.113.1 → top /32"]).toBe(1);
    expect(answered["203.0.113.1 → NAT onto a published prefix"]).toBe(1);
    expect(answered["203.0.113.1 → NAT with host bits"]).toBe(1);
    expect(answered["203.0.113.1 → disjoint"]).toBe(0);
    expect(answered["203.0.113.1 → WAN only"]).toBe(0);
    expect(answered["10.1.0.1 → same subnet"]).toBe(0);
    expect(answered["10.1.0.1 → container /16"]).toBeGreaterThan(0);
  });

  it("follows writes: a device's rows are replaced, and go with the device", async () => {
    const device = await insertTestDevice(t);
    const rows = () =>
      t.database.db
        .selectFrom("device_lan_subnets")
        .select(["kind", "subnet"])
        .where("device_id", "=", device.id)
        .orderBy("kind")
        .orderBy("subnet")
        .execute();
    await store(device, { name: "moved", lans: [{ ip: "10.77.0.9", mask: 16 }] });
    expect(await rows()).toEqual([
      { kind: "lan", subnet: "10.77.0.0/16" },
      { kind: "published", subnet: "10.77.0.0/16" },
    ]);
    await store(device, {
      name: "moved",
      lans: [{ ip: "10.78.1.1", mask: 24 }],
      rules: [nat("LAN0", "10.78.1.0/24", "100.99.0.0/24")],
    });
    expect(await rows()).toEqual([
      { kind: "lan", subnet: "10.78.1.0/24" },
      { kind: "published", subnet: "100.99.0.0/24" },
    ]);
    await t.database.db.deleteFrom("devices").where("id", "=", device.id).execute();
    expect(await rows()).toEqual([]);
  });

  it("the migration fills the table for existing devices as the service writes it", async () => {
    const read = () =>
      t.database.db
        .selectFrom("device_lan_subnets")
        .select(["device_id", "organization_id", "kind", "subnet"])
        .orderBy("device_id")
        .orderBy("kind")
        .orderBy("subnet")
        .execute();
    const written = await read();
    expect(written.length).toBeGreaterThan(FLEET.length);
    // Down in reverse order: a later migration replaced the job_groups table this one made.
    await jobsGroupColumn.down(t.database.db as never);
    await migrateDown(t.database.db as never);
    await migrateUp(t.database.db as never);
    await jobsGroupColumn.up(t.database.db as never);
    expect(await read()).toEqual(written);
  });
});
