/**
 * GET /api/tunnels and GET /api/devices/{id}/tunnels are built as JSON by the
 * database (services/tunnels/list-json.ts). They must answer exactly what the
 * object path (`listTunnels`, `toTunnel`, `toTunnelSummary`) answers: same
 * tunnels in the same order, same values, same total and next cursor, over
 * every status and pending reason, peer tunnels, an interface removed from
 * its device, reported figures whose rounding is on the edge, a report from
 * before the last connect, a number outside the range's loopbacks, and names
 * needing JSON escapes. And every tunnel's facts read at once (a derived sort)
 * are the facts a page reads.
 */
import { ListQueryRaw, type Tunnel, type TunnelSummary } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  peerTunnelBody,
  settleDevices,
  tunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";
import { foldListQuery, RECORDS_NEXT_HEADER } from "../../http/list-query.ts";
import { serviceCtx } from "../../services/context.ts";
import { listTunnels, type TunnelScope, toTunnelSummary } from "../../services/tunnels/query.ts";

describe("GET /api/tunnels (JSON built by the database)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  let d: TestDevice[];
  let ids: string[];

  beforeAll(async () => {
    tenant = await t.createTenant("Tunnel JSON");
    const names = ["alpha", 'quote "q" \\ back', "ünïcode ✓", "delta", "echo", "foxtrot"];
    d = [];
    for (const name of names) d.push(await wanDevice(t, { orgId: tenant.orgId, name }));
    const peer = await createPeer(t, { name: 'peer "gw"' }, tenant.token);
    const pairs: [number, number][] = [
      [0, 1],
      [2, 1],
      [3, 4],
      [5, 0],
      [4, 2],
      [1, 3],
    ];
    const created = await createTunnels(
      t,
      [...pairs.map(([a, b]) => tunnelBody(d[a]!, d[b]!)), peerTunnelBody(d[0]!, peer.id, { description: 'to "the" cloud' })],
      { token: tenant.token },
    );
    ids = created.tunnels.map((x) => x.id);
    const db = t.database.db;
    // alpha, the quote and delta connected and applied; echo connected with a job running (in flight);
    // foxtrot disconnected with its last job failed; ünïcode has never connected.
    await settleDevices(t, [d[0]!.id, d[1]!.id, d[3]!.id]);
    await settleDevices(t, [d[4]!.id], "connected", "running");
    await settleDevices(t, [d[5]!.id], "disconnected", "failed");
    // delta cannot configure the tunnel to echo (left out of its desired config).
    await sql`update devices set desired_tunnel_ids = array_remove(desired_tunnel_ids, ${ids[2]}::uuid) where id = ${d[3]!.id}::uuid`.execute(
      db,
    );
    // The quote's WAN interface is gone: tunnels on it show an empty name and address.
    await sql`update devices set interfaces = (select coalesce(jsonb_agg(i), '[]'::jsonb) from jsonb_array_elements(interfaces) i
      where i ->> 'id' <> ${d[1]!.wan.id}) where id = ${d[1]!.id}::uuid`.execute(db);
    await sql`update devices set last_connected_at = now() - interval '1 minute' where id in (${d[0]!.id}::uuid, ${d[3]!.id}::uuid)`.execute(
      db,
    );
    // Reported figures: rounding on the edge (0.1235 as a real), a report from before delta's connect, window unknown.
    const latest = (
      tunnel: number,
      device: number,
      side: "a" | "b",
      at: string,
      up: boolean,
      loss: number,
      windowMs: number | null,
    ) =>
      sql`insert into tunnel_latest (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples, window_ms)
        values (${ids[tunnel]}::uuid, ${d[device]!.id}::uuid, ${side}, now() - ${at}::interval, ${up}, ${loss}, 12.3456, 0.0005, 20, ${windowMs})`.execute(
        db,
      );
    await latest(0, 0, "a", "1 second", true, 0.1235, 10_000);
    await latest(0, 1, "b", "2 seconds", true, 2.5, null);
    await latest(2, 3, "a", "1 hour", false, 100, 10_000);
    await latest(6, 0, "a", "1 second", false, 33.3333, 5_000);
    // A range of four blocks (508 loopback pairs): one tunnel's number beyond it, one in the third block.
    await sql`update organizations set tunnel_range = '10.200.4.0/22' where id = ${tenant.orgId}::uuid`.execute(db);
    await sql`update tunnels set num = 600 where id = ${ids[3]}::uuid`.execute(db);
    await sql`update tunnels set num = 300 where id = ${ids[4]}::uuid`.execute(db);
  });

  const ctx = () =>
    serviceCtx(t.deps, {
      org: { id: tenant.orgId, accountId: tenant.accountId, name: "Tunnel JSON" },
      actor: { kind: "system", label: "test" },
      role: "owner",
    } as never);

  /** What the object path answers for the same query. */
  async function expected(query: Record<string, string>, response: "detailed" | "summary", scope: TunnelScope = {}) {
    const raw = ListQueryRaw.parse(query);
    const page = await listTunnels(ctx(), foldListQuery({ ...raw, ...(query.after ? { after: query.after } : {}) }), scope);
    return { ...page, items: response === "summary" ? page.items.map(toTunnelSummary) : page.items };
  }

  const filter = (key: string, op: string, val: unknown) => JSON.stringify([{ key, op, val }]);
  const cases: Record<string, string>[] = [
    {},
    { limit: "3" },
    { limit: "3", offset: "2" },
    { sort: "num", order: "desc" },
    { sort: "tunnelStatus", order: "desc" },
    { sort: "device.name" },
    { filter: filter("status", "==", "N/A") },
    { filter: filter("isPending", "==", true), limit: "2" },
    { filter: filter("device.name", "contains", "q") },
    { filter: filter("peer.name", "contains", "gw") },
    { filter: filter("deviceA.id", "==", "00000000-0000-4000-8000-000000000000") },
    { offset: "50" },
  ];

  it("answers what the object path answers in both sizes: same rows, order, values, total and next cursor", async () => {
    for (const response of ["detailed", "summary"] as const) {
      for (const query of cases) {
        const label = `${response} ${JSON.stringify(query)}`;
        const res = await t.api<Tunnel[]>("GET", "/api/tunnels", { token: tenant.token, query: { ...query, response } });
        expect(res.status, label).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/json");
        const want = await expected(query, response);
        expect(res.body, label).toEqual(want.items);
        expect(JSON.stringify(res.body), label).toBe(JSON.stringify(want.items));
        expect(res.headers.get("records-total"), label).toBe(String(want.total));
        expect(res.headers.get(RECORDS_NEXT_HEADER), label).toBe(want.next);
      }
    }
  });

  it("covers every status, pending reason, quality and loopback case it claims to", async () => {
    const res = await t.api<Tunnel[]>("GET", "/api/tunnels", { token: tenant.token });
    const all = res.body;
    expect(all).toHaveLength(7);
    expect(new Set(all.map((x) => x.tunnelStatus))).toEqual(new Set(["Pending", "Connected", "Not Connected"]));
    expect(new Set(all.map((x) => x.status))).toEqual(new Set(["Pending", "Connected", "Not Connected", "N/A"]));
    const reasons = all.flatMap((x) => x.pendingReason.split("; "));
    for (const part of ["cannot configure", "to connect", "to apply configuration", "last configuration job failed"])
      expect(
        reasons.some((r) => r.includes(part)),
        part,
      ).toBe(true);
    expect(all.some((x) => x.pendingReason.includes("; "))).toBe(true);
    const connected = all.find((x) => x.id === ids[0])!;
    expect(connected).toMatchObject({
      tunnelStatus: "Connected",
      interfaceB: { id: d[1]!.wan.id, name: "", IPv4: "" },
      quality: {
        a: { loss: 0.124, rtt: 12.346, jitter: 0.001, up: true, samples: 20, windowMs: 10_000 },
        b: { loss: 2.5, up: true, windowMs: null },
      },
    });
    expect(connected.quality.a!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(all.find((x) => x.id === ids[2])).toMatchObject({
      tunnelStatusA: "unknown",
      quality: { a: { loss: 100, up: false }, b: null },
    });
    expect(all.find((x) => x.id === ids[3])).toMatchObject({ num: 600, loopbackA: "", loopbackB: "" });
    expect(all.find((x) => x.id === ids[4])).toMatchObject({ num: 300, loopbackA: "10.200.6.94", loopbackB: "10.200.6.95" });
    expect(all.find((x) => x.id === ids[6])).toMatchObject({ deviceB: null, interfaceB: null, peer: { name: 'peer "gw"' } });
  });

  it("walks the same pages by cursor", async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 5; page++) {
      const query: Record<string, string> = { limit: "3", sort: "status", ...(after ? { after } : {}) };
      const res = await t.api<TunnelSummary[]>("GET", "/api/tunnels", {
        token: tenant.token,
        query: { ...query, response: "summary" },
      });
      const want = await expected(query, "summary");
      expect(res.body).toEqual(want.items);
      seen.push(...res.body.map((x) => x.id));
      const next = res.headers.get(RECORDS_NEXT_HEADER);
      expect(next).toBe(want.next);
      if (!next) break;
      after = next;
    }
    expect([...seen].sort()).toEqual([...ids].sort());
  });

  it("answers a device's tunnels as the object path scoped to the device", async () => {
    for (const response of ["detailed", "summary"] as const) {
      const queries: Record<string, string>[] = [{}, { limit: "1", offset: "1" }, { filter: filter("isPending", "==", false) }];
      for (const query of queries) {
        const res = await t.api<Tunnel[]>("GET", `/api/devices/${d[0]!.id}/tunnels`, {
          token: tenant.token,
          query: { ...query, response },
        });
        expect(res.status).toBe(200);
        const want = await expected(query, response, { deviceId: d[0]!.id });
        expect(res.body).toEqual(want.items);
        expect(res.headers.get("records-total")).toBe(String(want.total));
      }
    }
    const all = await t.api<Tunnel[]>("GET", `/api/devices/${d[0]!.id}/tunnels`, { token: tenant.token });
    expect(all.body.map((x) => x.id).sort()).toEqual([ids[0], ids[3], ids[6]].sort());
  });

  it("reads the same facts for every tunnel of the organization as for a page of them", async () => {
    // Sorted on an end's interface name, the list reads every tunnel's facts (the ends' interfaces taken apart once
    // and joined); in the default order it pages on the tunnels table and reads the page's facts (each end's
    // interface looked up in its device's row). Both must find the same interface: the first with the id in the device's
    // array, here where alpha's WAN id appears twice.
    await sql`update devices set interfaces = interfaces || (select jsonb_build_array(i || '{"name": "second", "IPv4": "192.0.2.9"}')
      from jsonb_array_elements(interfaces) i where i ->> 'id' = ${d[0]!.wan.id}) where id = ${d[0]!.id}::uuid`.execute(
      t.database.db,
    );
    const every = await listTunnels(ctx(), foldListQuery(ListQueryRaw.parse({ sort: "interfaceA.name" })));
    const page = await listTunnels(ctx(), foldListQuery(ListQueryRaw.parse({})));
    const byId = (xs: Tunnel[]) => [...xs].sort((x, y) => x.id.localeCompare(y.id));
    expect(every.items).toHaveLength(7);
    expect(byId(every.items)).toEqual(byId(page.items));
    for (const read of [every, page]) {
      const tunnel = read.items.find((x) => x.id === ids[0])!;
      expect(tunnel.interfaceA).toEqual({ id: d[0]!.wan.id, name: d[0]!.wan.name, IPv4: d[0]!.wan.IPv4 });
      expect(tunnel.interfaceB).toEqual({ id: d[1]!.wan.id, name: "", IPv4: "" });
    }
  });

  it("orders and filters on derived keys as the tunnels' own values say", async () => {
    // A derived sort pages on every tunnel's facts without the ends' interfaces, then reads the page's facts; an
    // interface name's on every tunnel's facts with them. The reference is the default list's tunnels, sorted here.
    const all = (await listTunnels(ctx(), foldListQuery(ListQueryRaw.parse({})))).items;
    expect(all).toHaveLength(7);
    const values: Record<string, (x: Tunnel) => string | boolean> = {
      status: (x) => x.status,
      tunnelStatus: (x) => x.tunnelStatus,
      isPending: (x) => x.isPending,
      tunnelStatusA: (x) => x.tunnelStatusA,
      tunnelStatusB: (x) => x.tunnelStatusB,
      "deviceA.name": (x) => x.deviceA.name,
      "interfaceA.name": (x) => x.interfaceA.name,
    };
    for (const [key, value] of Object.entries(values)) {
      for (const order of ["asc", "desc"] as const) {
        const sign = order === "asc" ? 1 : -1;
        const want = [...all]
          .sort((x, y) => {
            const [vx, vy] = [value(x), value(y)];
            return sign * (vx < vy ? -1 : vx > vy ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
          })
          .map((x) => x.id);
        const res = await t.api<TunnelSummary[]>("GET", "/api/tunnels", {
          token: tenant.token,
          query: { sort: key, order, response: "summary" },
        });
        expect(res.status).toBe(200);
        expect(
          res.body.map((x) => x.id),
          `${key} ${order}`,
        ).toEqual(want);
      }
    }
    for (const status of ["Connected", "Not Connected", "Pending", "N/A"]) {
      const res = await t.api<TunnelSummary[]>("GET", "/api/tunnels", {
        token: tenant.token,
        query: { filter: filter("status", "==", status), sort: "id", limit: "1", response: "summary" },
      });
      const want = all.filter((x) => x.status === status).map((x) => x.id);
      expect(want.length, status).toBeGreaterThan(0);
      expect(res.headers.get("records-total"), status).toBe(String(want.length));
      expect(res.body.map((x) => x.id)).toEqual([[...want].sort()[0]]);
    }
  });
});
