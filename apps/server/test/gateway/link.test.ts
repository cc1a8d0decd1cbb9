/**
 * The device link: hello/welcome and what it records, a second connection
 * replacing the first, liveness by ping/pong, and links ended by changes to
 * the device (deleted, approval withdrawn, token replaced), and no upgrade
 * request kept alive by a link.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { CLOSE_CODES, DEFAULT_MONITORING, PROTOCOL_VERSION } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";

// Pings often, so a silent device is dropped within about a second; three misses leave room for a busy machine.
const g = useGatewayServer({ TERN_WS_PING_INTERVAL_MS: "250", TERN_WS_PING_MISSES: "3" });

const connection = (id: string) =>
  g.database.db
    .selectFrom("devices")
    .select(["connection", "last_connected_at", "last_seen_at", "agent_version", "protocol_version", "applied_hash"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

describe("device link", () => {
  it("welcomes a device and records the link", async () => {
    const events: GatewayEventMap["device-connected"][] = [];
    const off = g.server.deps.deviceLink.events.on("device-connected", (e) => events.push(e));
    const { fleet, devices } = await g.fleet(1, { queueConfig: false });
    const device = devices[0]!;
    expect(fleet.device(0).ready).toBe(true);
    expect(await connection(device.id)).toMatchObject({
      connection: "connected",
      agent_version: "0.1.0-sim",
      protocol_version: PROTOCOL_VERSION,
      applied_hash: null,
    });
    const session = await g.database.db
      .selectFrom("device_sessions")
      .selectAll()
      .where("device_id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(session.instance_id).toBe(g.server.gateway.instanceId);
    expect(session.remote_address).toMatch(/127\.0\.0\.1/);
    expect(events).toContainEqual(expect.objectContaining({ deviceId: device.id, orgId: g.org.id, appliedHash: null }));
    expect(g.server.gateway.isConnectedHere(device.id)).toBe(true);
    off();
  });

  it("tells the device its status interval: from its config, else the server's default", async () => {
    const { devices } = await g.fleet(2, { connect: false, queueConfig: false });
    const bare = await openRawLink(g.server.url, devices[0]!.token, devices[0]!);
    bare.send(helloFor(devices[0]!.machineId));
    expect((await bare.next("welcome")).statusIntervalMs).toBe(g.config.TERN_STATUS_INTERVAL_MS);
    bare.ws.close();
    await g.change(devices[1]!.id);
    const configured = await openRawLink(g.server.url, devices[1]!.token, devices[1]!);
    configured.send(helloFor(devices[1]!.machineId));
    const welcome = await configured.next("welcome");
    expect(welcome).toMatchObject({
      deviceId: devices[1]!.id,
      protocolVersion: PROTOCOL_VERSION,
      statusIntervalMs: DEFAULT_MONITORING.statusIntervalMs,
    });
    configured.ws.close();
  });

  it("replaces the first connection with a second one of the same device (4009)", async () => {
    const { fleet, devices } = await g.fleet(1, { queueConfig: false });
    const device = devices[0]!;
    const closed = fleet.device(0).waitFor("closed", { timeoutMs: 5000 });
    const second = await openRawLink(g.server.url, device.token, device);
    second.send(helloFor(device.machineId));
    await second.next("welcome");
    expect(await closed).toMatchObject({ code: CLOSE_CODES.replaced, reason: "replaced by a newer connection of this device" });
    // The old link's end does not mark the device disconnected: the new one holds it.
    await new Promise((r) => setTimeout(r, 200));
    expect((await connection(device.id)).connection).toBe("connected");
    expect(g.server.gateway.link(device.id)).toBeDefined();
    second.ws.close();
    await waitUntil(
      () => connection(device.id),
      (r) => r.connection === "disconnected",
    );
  });

  it("drops a device that stops answering pings, marks it disconnected, and takes it back", async () => {
    const disconnected: GatewayEventMap["device-disconnected"][] = [];
    const off = g.server.deps.deviceLink.events.on("device-disconnected", (e) => disconnected.push(e));
    const { fleet, devices } = await g.fleet(1, { queueConfig: false });
    const device = devices[0]!;
    const sim = fleet.device(0);
    // Answers pings while alive: still connected after several ping periods.
    await new Promise((r) => setTimeout(r, 1500));
    expect(g.server.gateway.isConnectedHere(device.id)).toBe(true);

    const welcomedAgain = sim.waitFor("welcome", { timeoutMs: 10_000 });
    sim.freeze();
    await waitUntil(
      () => connection(device.id),
      (r) => r.connection === "disconnected",
      5000,
    );
    // The event follows the commit's answer to the server; this test's read, on another connection, can see
    // the committed row first (seen in a CI run), so the event is awaited, not expected at once.
    await waitUntil(
      () => disconnected.some((e) => e.deviceId === device.id),
      (seen) => seen,
      2000,
      "the device-disconnected event",
    );
    sim.unfreeze();
    await welcomedAgain;
    await waitUntil(
      () => connection(device.id),
      (r) => r.connection === "connected",
    );
    off();
  });

  it("ends the link of a device that is deleted, unapproved or gets a new token", async () => {
    const { fleet, devices } = await g.fleet(3, { queueConfig: false, reconnect: false });
    const closes = [0, 1, 2].map((i) => fleet.device(i).waitFor("closed", { timeoutMs: 5000 }));
    await g.database.db.deleteFrom("devices").where("id", "=", devices[0]!.id).execute();
    await g.database.db.updateTable("devices").set({ is_approved: false }).where("id", "=", devices[1]!.id).execute();
    await g.database.db.updateTable("devices").set({ device_token_hash: "replaced" }).where("id", "=", devices[2]!.id).execute();
    const [deleted, unapproved, token] = await Promise.all(closes);
    expect(deleted).toMatchObject({ code: CLOSE_CODES.deviceDeleted, reason: "device deleted" });
    expect(unapproved).toMatchObject({ code: CLOSE_CODES.notApproved, reason: "device approval withdrawn" });
    expect(token).toMatchObject({ code: CLOSE_CODES.unauthenticated, reason: "device token replaced" });
  });

  it("says deleted or unapproved when the next dispatch finds it before the trigger's notification does", async () => {
    // The change is made without its trigger (as if its notification were still on the way), then the
    // device is woken for jobs: the dispatcher finds its row gone or unapproved and ends the link itself.
    const { fleet, devices } = await g.fleet(2, { queueConfig: false, reconnect: false });
    const closes = [0, 1].map((i) => fleet.device(i).waitFor("closed", { timeoutMs: 5000 }));
    await g.database.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await trx.deleteFrom("devices").where("id", "=", devices[0]!.id).execute();
      await trx.updateTable("devices").set({ is_approved: false }).where("id", "=", devices[1]!.id).execute();
    });
    for (const d of devices) await sql`select pg_notify('tern_jobs', ${d.id})`.execute(g.database.db);
    const [deleted, unapproved] = await Promise.all(closes);
    expect(deleted).toMatchObject({ code: CLOSE_CODES.deviceDeleted, reason: "device deleted" });
    expect(unapproved).toMatchObject({ code: CLOSE_CODES.notApproved, reason: "device approval withdrawn" });
  });

  it("keeps no upgrade request alive once the link is up (its memory is the link's only)", async () => {
    // WeakRefs to the server side's upgrade requests, then a full collection: a link that still reaches its
    // request (a closure of the upgrade handler held by the socket did, with its head buffer) keeps it.
    const requests: WeakRef<object>[] = [];
    const track = (req: object) => requests.push(new WeakRef(req));
    g.server.http.on("upgrade", track);
    try {
      const { fleet } = await g.fleet(3, { queueConfig: false });
      expect(requests).toHaveLength(3);
      for (let i = 0; i < 3; i++) {
        await sleep(0); // a WeakRef's target stays alive until the job that last read it ends
        collectGarbage();
      }
      expect(requests.filter((r) => r.deref() !== undefined)).toHaveLength(0);
      expect([0, 1, 2].map((i) => fleet.device(i).ready)).toEqual([true, true, true]);
    } finally {
      g.server.http.off("upgrade", track);
    }
  });
});

/** A full garbage collection, without starting the test process with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}
