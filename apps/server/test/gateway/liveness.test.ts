/**
 * Issue 14: an instance whose own event loop was busy must not presume itself
 * (or another instance) dead. The event loop is blocked outright for longer
 * than the stale period (3 heartbeats); afterwards no link is reaped, and a
 * really dead instance is still reaped once the loop has run freely for a
 * stale period.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { FAST_GATEWAY_ENV, useGatewayServer, waitUntil } from "../support/gateway.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const g = useGatewayServer();
const heartbeatMs = Number(FAST_GATEWAY_ENV.TERN_INSTANCE_HEARTBEAT_MS);
const staleMs = heartbeatMs * 3;

function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer, no socket, no query callback runs meanwhile
  }
}

describe("instance liveness under a blocked event loop", () => {
  it("keeps its own links (and another live instance's) after its loop was blocked past the stale period", async () => {
    const others = testDatabaseKind() === "postgres" ? [await g.startAnother()] : [];
    const { fleet, devices } = await g.fleet(2);
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 2,
    );
    const instances = [g.server, ...others].map((s) => s.gateway.instanceId);
    const sessionRows = () =>
      g.database.db
        .selectFrom("devices")
        .leftJoin("device_sessions", "device_sessions.device_id", "devices.id")
        .select([
          "devices.connection",
          "devices.last_connected_at",
          "device_sessions.instance_id",
          "device_sessions.connected_at",
        ])
        .where(
          "devices.id",
          "in",
          devices.map((d) => d.id),
        )
        .orderBy("devices.id")
        .execute();
    // Reaped and re-claimed would show as a new connection time: the links must never have been judged dead.
    const before = await sessionRows();

    blockEventLoop(staleMs + 1_000);
    // The duties tick as soon as the loop is back (and again by hand, so the check cannot be missed).
    await g.server.gateway.duties.tick();
    for (const s of others) await s.gateway.duties.tick();
    await new Promise((r) => setTimeout(r, heartbeatMs * 2));

    const rows = await g.database.db.selectFrom("gateway_instances").select("id").execute();
    expect(rows.map((r) => r.id).sort()).toEqual(expect.arrayContaining(instances));
    const after = await sessionRows();
    expect(after).toEqual(before);
    for (const s of after) expect(s).toMatchObject({ connection: "connected", instance_id: g.server.gateway.instanceId });
    for (const d of devices) expect(g.server.gateway.link(d.id)?.state).toBe("ready");
    for (const s of others) await s.close();
  });

  it("still reaps an instance that really stopped, once its own loop ran freely for a stale period", async () => {
    const { devices } = await g.fleet(1, { connect: false });
    const dead = randomUUID();
    await g.database.db
      .insertInto("gateway_instances")
      .values({ id: dead, hostname: "gone", pid: 1, heartbeat_at: sql`now() - interval '1 hour'` })
      .execute();
    await g.database.db
      .insertInto("device_sessions")
      .values({ device_id: devices[0]!.id, session_id: randomUUID(), instance_id: dead, remote_address: "127.0.0.1" })
      .execute();
    await g.database.db.updateTable("devices").set({ connection: "connected" }).where("id", "=", devices[0]!.id).execute();
    const row = await waitUntil(
      () => g.database.db.selectFrom("devices").select("connection").where("id", "=", devices[0]!.id).executeTakeFirstOrThrow(),
      (r) => r.connection === "disconnected",
      staleMs * 4,
    );
    expect(row.connection).toBe("disconnected");
    expect(await g.database.db.selectFrom("gateway_instances").select("id").where("id", "=", dead).execute()).toEqual([]);
  });
});
