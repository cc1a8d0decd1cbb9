/**
 * The stored tunnel status (stored-status.ts, migration 20261207-501): a list sorted or filtered by a status
 * key answers exactly what the derivation from every tunnel's facts answers, whether the change behind it is
 * still marked or already folded, for every fact a status is derived from: a device's connection, last connect
 * and desired config, its config jobs (queued, running, failed, deleted), each end's report (the first one,
 * `up` flipping, the first report after a reconnect), tunnels created, described and deleted; never another
 * organization's tunnels. The reference is the
 * default list (sorted by number, read from the facts), sorted and filtered here.
 */
import { ListQueryRaw, type Tunnel } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { createTunnels, settleDevices, tunnelBody, wanDevice } from "../../../test/support/tunnels.ts";
import * as migration from "../../db/migrations/20261207-501-tunnel-status.ts";
import { foldListQuery } from "../../http/list-query.ts";
import { serviceCtx } from "../context.ts";
import { listTunnels } from "./query.ts";
import { foldTunnelStatus, tunnelStatusDuty } from "./stored-status.ts";

const KEYS = {
  status: (x: Tunnel) => x.status,
  tunnelStatus: (x: Tunnel) => x.tunnelStatus,
  isPending: (x: Tunnel) => x.isPending,
  tunnelStatusA: (x: Tunnel) => x.tunnelStatusA,
  tunnelStatusB: (x: Tunnel) => x.tunnelStatusB,
};
const VALUES: Record<keyof typeof KEYS, (string | boolean)[]> = {
  status: ["Connected", "Not Connected", "Pending", "N/A"],
  tunnelStatus: ["Connected", "Not Connected", "Pending"],
  isPending: [true, false],
  tunnelStatusA: ["up", "down", "unknown"],
  tunnelStatusB: ["up", "down", "unknown"],
};

describe("stored tunnel status", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  let d: TestDevice[];
  let ids: string[];

  beforeAll(async () => {
    tenant = await t.createTenant("Stored status");
    d = [];
    for (const name of ["a", "b", "c", "d", "e"]) d.push(await wanDevice(t, { orgId: tenant.orgId, name }));
    const pairs: [number, number][] = [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 0],
      [0, 2],
    ];
    ids = (
      await createTunnels(
        t,
        pairs.map(([a, b]) => tunnelBody(d[a]!, d[b]!)),
        { token: tenant.token },
      )
    ).tunnels.map((x) => x.id);
    // Another organization's tunnels, stored and marked beside these: never in this organization's lists.
    const other = await t.createTenant("Other stored status");
    const x = await wanDevice(t, { orgId: other.orgId, name: "x" });
    const y = await wanDevice(t, { orgId: other.orgId, name: "y" });
    await createTunnels(t, [tunnelBody(x, y)], { token: other.token });
    await settleDevices(t, [x.id, y.id]);
  });

  const ctx = () =>
    serviceCtx(t.deps, {
      org: { id: tenant.orgId, accountId: tenant.accountId, name: "Stored status" },
      actor: { kind: "system", label: "test" },
      role: "owner",
    } as never);
  const list = (query: Record<string, string>) => listTunnels(ctx(), foldListQuery(ListQueryRaw.parse(query)));
  const db = () => t.database.db;
  const marks = async () =>
    Number(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from tunnel_status_marks where organization_id = ${tenant.orgId}::uuid`.execute(db())
      ).rows[0]!.n,
    );
  const fold = () => foldTunnelStatus(db());

  /** Every status key's order both ways, and each of its values as a filter, against the reference. */
  async function expectExact(label: string) {
    const all = (await list({ limit: "1000" })).items;
    for (const [key, value] of Object.entries(KEYS)) {
      for (const order of ["asc", "desc"] as const) {
        const sign = order === "asc" ? 1 : -1;
        const want = [...all]
          .sort((x, y) => {
            const [vx, vy] = [String(value(x)), String(value(y))];
            return sign * (vx < vy ? -1 : vx > vy ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
          })
          .map((x) => x.id);
        const page = await list({ sort: key, order, limit: "1000" });
        expect(
          page.items.map((x) => x.id),
          `${label}: ${key} ${order}`,
        ).toEqual(want);
        // The page's items are read from the facts: the same values as the reference.
        expect(
          page.items.map((x) => String(value(x))),
          `${label}: ${key} ${order} values`,
        ).toEqual(want.map((id) => String(value(all.find((x) => x.id === id)!))));
      }
      for (const v of VALUES[key as keyof typeof KEYS]) {
        const page = await list({ filter: JSON.stringify([{ key, op: "==", val: v }]), sort: "num", limit: "1000" });
        const want = all.filter((x) => value(x) === v).map((x) => x.id);
        expect(
          page.items.map((x) => x.id),
          `${label}: ${key} == ${v}`,
        ).toEqual(want);
        expect(page.total, `${label}: ${key} == ${v} total`).toBe(want.length);
      }
    }
    // The tunnels' own columns beside a status key: read from the stored row too.
    const own: Record<string, (x: Tunnel) => string | number> = {
      num: (x) => x.num,
      description: (x) => x.description,
      "deviceB.id": (x) => x.deviceB?.id ?? "",
    };
    for (const [key, value] of Object.entries(own)) {
      for (const pending of [true, false]) {
        const page = await list({
          filter: JSON.stringify([{ key: "isPending", op: "==", val: pending }]),
          sort: key,
          limit: "1000",
        });
        const want = all
          .filter((x) => x.isPending === pending)
          .sort((x, y) => {
            const [vx, vy] = [value(x), value(y)];
            return vx < vy ? -1 : vx > vy ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
          })
          .map((x) => x.id);
        expect(
          page.items.map((x) => x.id),
          `${label}: isPending == ${pending} by ${key}`,
        ).toEqual(want);
      }
    }
    return all;
  }

  /** The stored rows of the organization, against the reference, once nothing is marked but `marked`. */
  async function expectStored(all: Tunnel[], marked: string[] = []) {
    const rows = await db()
      .selectFrom("tunnel_status")
      .selectAll()
      .where("organization_id", "=", tenant.orgId)
      .orderBy("id")
      .execute();
    const want = all
      .filter((x) => !marked.includes(x.id))
      .map((x) => ({
        id: x.id,
        organization_id: tenant.orgId,
        num: x.num,
        description: x.description,
        device_a: x.deviceA.id,
        interface_a: x.interfaceA.id,
        device_b: x.deviceB?.id ?? null,
        interface_b: x.interfaceB?.id ?? null,
        peer_id: x.peer?.id ?? null,
        pathlabel_id: x.pathlabel,
        created_at: new Date(x.createdAt),
        tunnel_status: x.tunnelStatus,
        status: x.status,
        is_pending: x.isPending,
        a_reported: x.tunnelStatusA,
        b_reported: x.tunnelStatusB,
      }))
      .sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(rows.filter((r) => !marked.includes(r.id))).toEqual(want);
  }

  /** A change, then the lists exact while it is marked and again once folded, and the stored rows right. */
  async function step(label: string, change: () => Promise<unknown>) {
    await change();
    expect(await marks(), `${label}: marked`).toBeGreaterThan(0);
    await expectExact(`${label} (marked)`);
    await fold();
    const all = await expectExact(`${label} (folded)`);
    await expectStored(all);
    expect(await marks(), `${label}: folded`).toBe(0);
  }

  const report = (tunnel: number, device: number, side: "a" | "b", up: boolean, at = sql`now()`) =>
    sql`insert into tunnel_latest (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples)
      values (${ids[tunnel]}::uuid, ${d[device]!.id}::uuid, ${side}, ${at}, ${up}, 0, 1, 0, 10)
      on conflict (tunnel_id, side) do update set at = excluded.at, up = excluded.up
      where tunnel_latest.at <= excluded.at`.execute(db());

  it("answers what the facts answer through every change of a fact, marked and folded", async () => {
    // Created: every tunnel marked (its insert), queued jobs for every end.
    await step("created", async () => undefined);
    await step("connected and applied", () =>
      settleDevices(
        t,
        d.map((x) => x.id),
      ),
    );
    await step("first reports", async () => {
      for (const [tunnel, a, b] of [
        [0, 0, 1],
        [1, 1, 2],
        [2, 2, 3],
        [3, 3, 4],
      ] as const) {
        await report(tunnel, a, "a", true);
        await report(tunnel, b, "b", tunnel !== 2);
      }
    });
    await step("up flips", () => report(2, 3, "b", true));
    await step("a report without a flip changes nothing", async () => {
      await report(0, 0, "a", true);
      await sql`insert into tunnel_status_marks (organization_id, device_id) values (${tenant.orgId}::uuid, ${d[0]!.id}::uuid)`.execute(
        db(),
      );
    });
    await step("a config job queued", () =>
      sql`insert into jobs (id, organization_id, device_id, type, state, tasks, target_hash, created_by)
        values (gen_random_uuid(), ${tenant.orgId}::uuid, ${d[1]!.id}::uuid, 'modify-device', 'queued', '[]', '', 'test')`.execute(
        db(),
      ),
    );
    await step("it fails", () => settleDevices(t, [d[1]!.id], "connected", "failed"));
    await step("the failed job deleted", () =>
      db().deleteFrom("jobs").where("device_id", "=", d[1]!.id).where("state", "=", "failed").execute(),
    );
    await step("left out of a desired config", () =>
      sql`update devices set desired_tunnel_ids = array_remove(desired_tunnel_ids, ${ids[3]}::uuid) where id = ${d[4]!.id}::uuid`.execute(
        db(),
      ),
    );
    await step("disconnected", () =>
      db().updateTable("devices").set({ connection: "disconnected" }).where("id", "=", d[2]!.id).execute(),
    );
    await step("never connected", () =>
      db().updateTable("devices").set({ connection: "never" }).where("id", "=", d[4]!.id).execute(),
    );
    await step("described", () =>
      db().updateTable("tunnels").set({ description: "zz last" }).where("id", "=", ids[0]!).execute(),
    );
    await step("a tunnel deleted", () =>
      t.api("DELETE", `/api/tunnels/${ids[5]}`, { token: tenant.token }).then((res) => expect(res.status, res.text).toBe(202)),
    );
    expect(await db().selectFrom("tunnel_status").select("id").where("id", "=", ids[5]!).execute()).toEqual([]);
  });

  it("keeps a reconnected end's tunnels marked until the end reports on its new link", async () => {
    await settleDevices(t, [d[2]!.id]);
    await report(1, 2, "b", true);
    await fold();
    expect(await marks()).toBe(0);
    // Device c reconnects: its ends' reports predate the connect and read `unknown`.
    await db()
      .updateTable("devices")
      .set({ connection: "connected", last_connected_at: sql`now()` })
      .where("id", "=", d[2]!.id)
      .execute();
    await fold();
    const kept = await sql<{ tunnel_id: string }>`select tunnel_id from tunnel_status_marks
      where organization_id = ${tenant.orgId}::uuid order by tunnel_id`.execute(db());
    expect(kept.rows.map((r) => r.tunnel_id)).toEqual([ids[1]!, ids[2]!].sort());
    let all = await expectExact("reconnected");
    expect(all.find((x) => x.id === ids[1])!.tunnelStatusB).toBe("unknown");
    // Its next report does not flip `up` (no trigger fires), yet turns `unknown` into `up`: still exact.
    await report(1, 2, "b", true, sql`now() + interval '1 second'`);
    all = await expectExact("reported on the new link");
    expect(all.find((x) => x.id === ids[1])!.tunnelStatusB).toBe("up");
    await fold();
    const still = await sql<{ tunnel_id: string }>`select tunnel_id from tunnel_status_marks
      where organization_id = ${tenant.orgId}::uuid`.execute(db());
    expect(still.rows.map((r) => r.tunnel_id)).toEqual([ids[2]!]);
    await expectStored(await expectExact("folded"), [ids[2]!]);
  });

  it("reads the stored status of an unmarked tunnel, and derives a marked one", async () => {
    await fold();
    const before = (await list({ sort: "tunnelStatusA", order: "asc", limit: "1000" })).items.map((x) => x.id);
    // Written behind the duty's back, with no marker: a page in status order trusts the stored row.
    const unmarked = (await marks()) === 0 ? ids[0]! : ids[3]!;
    await sql`update tunnel_status set a_reported = 'aaa' where id = ${unmarked}::uuid`.execute(db());
    const tampered = (await list({ sort: "tunnelStatusA", order: "asc", limit: "1000" })).items.map((x) => x.id);
    expect(tampered[0]).toBe(unmarked);
    // Marked, it is derived again.
    await sql`insert into tunnel_status_marks (organization_id, tunnel_id) values (${tenant.orgId}::uuid, ${unmarked}::uuid)`.execute(
      db(),
    );
    expect((await list({ sort: "tunnelStatusA", order: "asc", limit: "1000" })).items.map((x) => x.id)).toEqual(before);
    await fold();
    expect(
      (await db().selectFrom("tunnel_status").select("a_reported").where("id", "=", unmarked).executeTakeFirst())?.a_reported,
    ).not.toBe("aaa");
  });

  it("spaces the duty's runs so that it takes at most a tenth of the database", async () => {
    let clock = 0;
    const duty = tunnelStatusDuty(2_000, () => clock);
    const mark = () =>
      sql`insert into tunnel_status_marks (organization_id, tunnel_id) values (${tenant.orgId}::uuid, ${ids[0]}::uuid)`.execute(
        db(),
      );
    const marked = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from tunnel_status_marks where tunnel_id = ${ids[0]}::uuid`.execute(
          db(),
        )
      ).rows[0]!.n;
    await fold();
    await mark();
    // A run that took 50 ms (the clock read 0 before it, 50 after): the next no sooner than 500 ms after its start.
    const run = async (at: number, took: number) => {
      clock = at;
      const pending = duty.run(db(), () => undefined);
      clock = at + took;
      await pending;
    };
    clock = 0;
    const first = duty.run(db(), () => undefined);
    clock = 50;
    await first;
    expect(await marked()).toBe(0);
    await mark();
    await run(400, 10);
    expect(await marked(), "skipped inside its spacing").toBe(1);
    await run(500, 10);
    expect(await marked(), "run once spaced").toBe(0);
  });

  it("marks every existing tunnel when it lands, and down takes its tables and triggers away", async () => {
    await migration.down(db() as never);
    await createTunnels(t, [tunnelBody(d[1]!, d[3]!)], { token: tenant.token });
    await migration.up(db() as never);
    const { rows } = await sql<{ n: number; tunnels: number }>`select
        (select count(distinct tunnel_id)::int from tunnel_status_marks where organization_id = ${tenant.orgId}::uuid) as n,
        (select count(*)::int from tunnels where organization_id = ${tenant.orgId}::uuid) as tunnels`.execute(db());
    expect(rows[0]!.n).toBe(rows[0]!.tunnels);
    await expectExact("after the migration");
    await fold();
    await expectStored(await expectExact("folded after the migration"), [ids[2]!]);
  });
});
