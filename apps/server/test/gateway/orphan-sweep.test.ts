/**
 * Issue 14: two duties that ran every duty interval read a table whole. The
 * reaper of dead instances now reads only the sessions; the two repairs that
 * read every device's row or every tunnel end's latest figures run once a
 * minute in the "orphan-sweep" duty (sessions.ts `disconnectUnsessioned`,
 * retention.ts `deleteLatestOfDeletedTunnels`), and still do what the reaper
 * and the retention did.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { deleteLatestOfDeletedTunnels } from "../../src/gateway/live-state/retention.ts";
import { disconnectUnsessioned, reapStaleLinks } from "../../src/gateway/sessions.ts";
import { FAST_GATEWAY_ENV, useGatewayServer } from "../support/gateway.ts";

const g = useGatewayServer();
const staleMs = Number(FAST_GATEWAY_ENV.TERN_INSTANCE_HEARTBEAT_MS) * 3;

// The duties would race the direct calls (they do the same work): paused for each test, running again after.
beforeEach(() => g.server.gateway.duties.stop());
afterEach(() => g.server.gateway.duties.start());

describe("the orphan sweep", () => {
  it("disconnects a device marked connected without a session, which the every-interval reaper leaves alone", async () => {
    const { devices } = await g.fleet(2, { connect: false });
    const [unsessioned, dead] = devices.map((d) => d.id) as [string, string];
    // One device marked connected with no session at all, one whose session is a dead instance's.
    const deadInstance = randomUUID();
    await g.database.db
      .insertInto("gateway_instances")
      .values({ id: deadInstance, hostname: "gone", pid: 1, heartbeat_at: sql`now() - interval '1 hour'` })
      .execute();
    await g.database.db
      .insertInto("device_sessions")
      .values({ device_id: dead, session_id: randomUUID(), instance_id: deadInstance, remote_address: "127.0.0.1" })
      .execute();
    await g.database.db.updateTable("devices").set({ connection: "connected" }).where("id", "in", [unsessioned, dead]).execute();
    const connection = async (id: string) =>
      (await g.database.db.selectFrom("devices").select("connection").where("id", "=", id).executeTakeFirstOrThrow()).connection;

    const reaped = await reapStaleLinks(g.database.db, staleMs, g.server.gateway.instanceId);
    expect(reaped.map((r) => r.id)).toEqual([dead]);
    expect(await connection(dead)).toBe("disconnected");
    expect(await connection(unsessioned)).toBe("connected");

    const repaired = await disconnectUnsessioned(g.database.db);
    expect(repaired).toEqual([{ id: unsessioned, organization_id: g.org.id }]);
    const row = await g.database.db
      .selectFrom("devices")
      .select(["connection", "disconnected_at"])
      .where("id", "=", unsessioned)
      .executeTakeFirstOrThrow();
    expect(row.connection).toBe("disconnected");
    expect(row.disconnected_at).toBeInstanceOf(Date);
    // Nothing left to repair: a second sweep changes nothing.
    expect(await disconnectUnsessioned(g.database.db)).toEqual([]);
  });

  it("runs as its own duty, once a minute", async () => {
    const { devices } = await g.fleet(1, { connect: false });
    const id = devices[0]!.id;
    const markConnected = () =>
      g.database.db.updateTable("devices").set({ connection: "connected" }).where("id", "=", id).execute();
    const connection = async () =>
      (await g.database.db.selectFrom("devices").select("connection").where("id", "=", id).executeTakeFirstOrThrow()).connection;
    const runs = () => g.server.gateway.duties.ran.get("orphan-sweep") ?? 0;
    // Due now (its last run, at the server's start, set back), then not again within its minute.
    await g.database.db
      .updateTable("gateway_duties")
      .set({ last_run_at: sql`'-infinity'` })
      .where("name", "=", "orphan-sweep")
      .execute();
    await markConnected();
    const before = runs();
    await g.server.gateway.duties.tick();
    expect(runs()).toBe(before + 1);
    expect(await connection()).toBe("disconnected");
    await markConnected();
    await g.server.gateway.duties.tick();
    expect(runs()).toBe(before + 1);
    expect(await connection()).toBe("connected");
  });

  it("deletes the latest figures of deleted tunnels and keeps those of the others", async () => {
    const { devices } = await g.fleet(2, { connect: false, queueConfig: false });
    const [a, b] = devices as [(typeof devices)[0], (typeof devices)[0]];
    const kept = randomUUID();
    await g.database.db
      .insertInto("tunnels")
      .values({
        id: kept,
        organization_id: g.org.id,
        num: 1,
        device_a: a.id,
        interface_a: a.wanId,
        device_b: b.id,
        interface_b: b.wanId,
        endpoint_key: `${a.id}|${b.id}`,
        psk_enc: g.server.deps.keyring.encrypt(randomBytes(16).toString("hex"), kept),
        notifications: toJson({ rtt: null, dropRate: null }),
      })
      .execute();
    const gone = randomUUID();
    const latest = (tunnelId: string, side: "a" | "b") => ({
      tunnel_id: tunnelId,
      device_id: side === "a" ? a.id : b.id,
      side,
      at: new Date(),
      up: true,
      loss: 0,
      rtt: 1,
      jitter: 0,
      samples: 1,
    });
    await g.database.db
      .insertInto("tunnel_latest")
      .values([latest(kept, "a"), latest(kept, "b"), latest(gone, "a"), latest(gone, "b")])
      .execute();

    expect(await deleteLatestOfDeletedTunnels(g.database.db)).toBe(2);
    const left = await g.database.db
      .selectFrom("tunnel_latest")
      .select(["tunnel_id", "side"])
      .where("tunnel_id", "in", [kept, gone])
      .orderBy("side")
      .execute();
    expect(left).toEqual([
      { tunnel_id: kept, side: "a" },
      { tunnel_id: kept, side: "b" },
    ]);
  });
});
