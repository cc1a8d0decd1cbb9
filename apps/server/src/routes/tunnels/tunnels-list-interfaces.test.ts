/**
 * The tunnel list reads each end's interface (name, IPv4) in the database instead of shipping both
 * devices' whole interfaces jsonb per row and searching it in the server (issue 14). The answers must be
 * what that search gave: the first interface with the tunnel's id, "" when it is gone, and the same
 * filters, sort order and totals on `interfaceA.name` / `interfaceB.name`, on both list paths.
 */
import type { DeviceInterface, Tunnel } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestUser, useTestServer } from "../../../test/support/test-server.ts";
import { createPeer, createTunnels, peerTunnelBody, tunnelBody, wanDevice } from "../../../test/support/tunnels.ts";

describe("GET /api/tunnels: each end's interface", () => {
  const t = useTestServer();
  let tenant: TestUser & { orgId: string };
  let devices: TestDevice[];

  const list = (query: Record<string, string | number | undefined> = {}) =>
    t.api<Tunnel[]>("GET", "/api/tunnels", { token: tenant.token, query });
  const filter = (...filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);
  // A filter every tunnel passes on a derived key: the list then pages on the facts of every tunnel.
  const everyStatus = { key: "tunnelStatus", op: "!=", val: "no such status" };

  const setInterfaces = async (id: string, change: (interfaces: DeviceInterface[]) => DeviceInterface[]) => {
    const row = await t.deps.db.selectFrom("devices").select("interfaces").where("id", "=", id).executeTakeFirstOrThrow();
    const next = change(row.interfaces as DeviceInterface[]);
    await sql`update devices set interfaces = ${JSON.stringify(next)}::jsonb where id = ${id}::uuid`.execute(t.deps.db);
  };

  /** What the server answered before: the first interface with the id in the device's stored interfaces. */
  const expectedEnds = async (tunnel: Tunnel) => {
    const rows = await t.deps.db
      .selectFrom("devices")
      .select(["id", "interfaces"])
      .where("organization_id", "=", tenant.orgId)
      .execute();
    const interfacesOf = new Map(rows.map((r) => [r.id, r.interfaces as DeviceInterface[]]));
    const ref = (deviceId: string, id: string) => {
      const found = interfacesOf.get(deviceId)?.find((i) => i.id === id);
      return { id, name: found?.name ?? "", IPv4: found?.IPv4 ?? "" };
    };
    return {
      interfaceA: ref(tunnel.deviceA.id, tunnel.interfaceA.id),
      interfaceB: tunnel.deviceB && tunnel.interfaceB ? ref(tunnel.deviceB.id, tunnel.interfaceB.id) : null,
    };
  };

  beforeAll(async () => {
    tenant = await t.createTenant("Tunnel ends");
    devices = [];
    for (const name of ["alpha", "bravo", "charlie", "delta"]) devices.push(await wanDevice(t, { orgId: tenant.orgId, name }));
    const [alpha, bravo, charlie, delta] = devices as [TestDevice, TestDevice, TestDevice, TestDevice];
    const peer = await createPeer(t, { name: "edge-gw" }, tenant.token);
    await createTunnels(
      t,
      [
        tunnelBody(alpha, bravo),
        tunnelBody(charlie, bravo),
        tunnelBody(delta, alpha),
        tunnelBody(bravo, delta),
        peerTunnelBody(charlie, peer.id),
      ],
      { token: tenant.token },
    );
    // alpha's WAN renamed; bravo gets an interface before its WAN; delta's WAN (end A of one tunnel, end B
    // of another) is gone from its interfaces; charlie's WAN loses its address.
    await setInterfaces(alpha.id, (list) => list.map((i) => (i.id === alpha.wan.id ? { ...i, name: "uplink-z" } : i)));
    await setInterfaces(bravo.id, (list) => [
      { ...list[1]!, id: "00000000-0000-4000-8000-000000000001", name: "decoy" },
      ...list,
    ]);
    await setInterfaces(delta.id, (list) => list.filter((i) => i.id !== delta.wan.id));
    await setInterfaces(charlie.id, (list) => list.map((i) => (i.id === charlie.wan.id ? { ...i, IPv4: "" } : i)));
  });

  it("answers each end's interface as found in the device's interfaces, on both list paths and GET /tunnels/{id}", async () => {
    const plain = await list();
    const derived = await list({ filter: filter(everyStatus) });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body).toHaveLength(5);
    expect(derived.body).toEqual(plain.body);
    for (const tunnel of plain.body) {
      const expected = await expectedEnds(tunnel);
      expect({ interfaceA: tunnel.interfaceA, interfaceB: tunnel.interfaceB }).toEqual(expected);
      const one = await t.api<Tunnel>("GET", `/api/tunnels/${tunnel.id}`, { token: tenant.token });
      expect({ interfaceA: one.body.interfaceA, interfaceB: one.body.interfaceB }).toEqual(expected);
    }
    // The cases the setup made are all present: renamed, gone (empty name and address), no address.
    const names = plain.body.flatMap((x) => [x.interfaceA.name, x.interfaceB?.name]);
    expect(names).toEqual(expect.arrayContaining(["uplink-z", ""]));
    expect(plain.body.some((x) => x.interfaceA.IPv4 === "" && x.interfaceA.name !== "")).toBe(true);
  });

  it("filters and sorts on interfaceA.name / interfaceB.name in the same order and totals as the names answered", async () => {
    const all = (await list()).body;
    for (const end of ["A", "B"] as const) {
      const nameOf = (x: Tunnel) => (end === "A" ? x.interfaceA.name : (x.interfaceB?.name ?? null));
      for (const order of ["asc", "desc"] as const) {
        // Sorted like the list sorts: a missing interface (no name) first ascending, last descending; then id.
        const key = (x: Tunnel) => {
          const n = nameOf(x);
          const gone = n === null || n === "";
          return { gone, n: n ?? "" };
        };
        const expected = [...all].sort((x, y) => {
          const [a, b] = [key(x), key(y)];
          const sign = order === "asc" ? 1 : -1;
          if (a.gone !== b.gone) return (a.gone ? -1 : 1) * sign;
          if (a.n !== b.n) return (a.n < b.n ? -1 : 1) * sign;
          return (x.id < y.id ? -1 : 1) * sign;
        });
        const res = await list({ sort: `interface${end}.name`, order });
        expect(res.status, res.text).toBe(200);
        expect(res.body.map((x) => x.id)).toEqual(expected.map((x) => x.id));
        expect(res.headers.get("records-total")).toBe("5");
      }
      for (const [op, val] of [
        ["==", "uplink-z"],
        ["contains", "wan"],
        ["!contains", "wan"],
        ["==", "decoy"],
      ] as const) {
        const matches = (x: Tunnel) => {
          const n = nameOf(x);
          if (op === "==") return n === val;
          const has = n !== null && n !== "" && n.includes(val);
          return op === "contains" ? has : !has;
        };
        // Peer tunnels have no end B: "no interface matches" holds for them, no other filter does.
        const expected = all.filter(matches).map((x) => x.id);
        const res = await list({ filter: filter({ key: `interface${end}.name`, op, val }) });
        expect(res.status, res.text).toBe(200);
        expect(res.body.map((x) => x.id).sort()).toEqual([...expected].sort());
        expect(res.headers.get("records-total")).toBe(String(expected.length));
      }
    }
    // The renamed interface is found by its new name, the decoy (never a tunnel's interface) by none.
    expect((await list({ filter: filter({ key: "interfaceA.name", op: "==", val: "uplink-z" }) })).body.length).toBeGreaterThan(
      0,
    );
    expect((await list({ filter: filter({ key: "interfaceB.name", op: "==", val: "decoy" }) })).body).toEqual([]);
  });
});
