/**
 * Device and tunnel live events, one per statement and organization
 * (migration 20261205-101-live-events-per-statement, services/live-events/tunnel-status-events.ts): a
 * statement that creates, changes or deletes several devices of an
 * organization announces them once (`*`, count), one device keeps its own id
 * and summary, a write that leaves connection, approval and name alone
 * announces nothing, and a statement over two organizations announces each
 * to its own. A fleet connecting and dropping is announced device for device
 * in the counts. Tunnels the same. A flush in which several tunnels flipped
 * is one event, one tunnel keeps its id and status.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { GatewayEvents } from "../../src/gateway/events.ts";
import { createAccountWithOwner } from "../../src/services/bootstrap.ts";
import { publishTunnelStatusEvents } from "../../src/services/live-events/tunnel-status-events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { lastEventId as journalEnd } from "../support/live-journal.ts";

const g = useGatewayServer();

interface Journaled {
  organization_id: string;
  event: { kind: string; action: string; id: string; data?: Record<string, unknown> };
}

/** The events of `kind` journaled after `afterId`, in order. */
async function eventsAfter(afterId: string, kind: string): Promise<Journaled[]> {
  const rows = await g.database.db
    .selectFrom("live_events")
    .select(["organization_id", "event"])
    .where("id", ">", afterId as never)
    .orderBy("id")
    .execute();
  return (rows as unknown as Journaled[]).filter((r) => r.event.kind === kind);
}

const lastEventId = () => journalEnd(g.database.db);

/** How many devices the events announce per action (and, for one device, its summary). */
const announced = (events: Journaled[], action: string) =>
  events.filter((e) => e.event.action === action).reduce((n, e) => n + (e.event.id === "*" ? Number(e.event.data!.count) : 1), 0);

/** A device row of `orgId` with nothing but what the table requires. */
async function insertDevice(orgId: string, name: string): Promise<string> {
  const id = randomUUID();
  await g.database.db
    .insertInto("devices")
    .values({
      id,
      organization_id: orgId,
      name,
      hostname: name,
      machine_id: `m-${id}`,
      device_token_hash: `h-${id}`,
      interfaces: toJson([]),
      static_routes: toJson([]),
      dhcp: toJson([]),
      bgp: toJson({ enable: false, routerId: "", localASN: null, keepaliveInterval: 30, holdInterval: 90, neighbors: [] }),
      firewall: toJson({ rules: [] }),
    })
    .execute();
  return id;
}

describe("device live events per statement", () => {
  it("several devices of one statement are one event; one keeps its id and summary; other columns announce nothing", async () => {
    const mark = await lastEventId();
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const ids = devices.map((d) => d.id);
    // The test inserts its devices one statement each: each its own event.
    const created = await eventsAfter(mark, "device");
    expect(created.map((e) => e.event.id)).toEqual(ids);
    expect(created[0]!.event).toMatchObject({ action: "created", data: { isApproved: true, isConnected: false } });

    // Written, but nothing the console shows changed (the status writer's last-seen, a desired config): no event.
    const quiet = await lastEventId();
    await g.database.db.updateTable("devices").set({ last_seen_at: new Date() }).where("id", "in", ids).execute();
    expect(await eventsAfter(quiet, "device")).toEqual([]);

    // Two of three changed by one statement (a bulk rename; a batch of hellos is the fleet test below): one event
    // counting two. (Not the connection: the orphan-sweep duty disconnects a device marked connected without a session.)
    const two = await lastEventId();
    await g.database.db
      .updateTable("devices")
      .set({ name: sql<string>`name || '-2'` })
      .where("id", "in", ids.slice(0, 2))
      .execute();
    expect((await eventsAfter(two, "device")).map((e) => e.event)).toEqual([
      { kind: "device", action: "updated", id: "*", at: expect.any(String), data: { count: 2 } },
    ]);

    // All three written, one of them changed: that device's own event with its summary.
    const one = await lastEventId();
    await g.database.db
      .updateTable("devices")
      .set((eb) => ({ name: eb.case().when("id", "=", ids[2]!).then("renamed-third").else(eb.ref("name")).end() }))
      .where("id", "in", ids)
      .execute();
    expect((await eventsAfter(one, "device")).map((e) => e.event)).toEqual([
      {
        kind: "device",
        action: "updated",
        id: ids[2],
        at: expect.any(String),
        data: { isConnected: false, isApproved: true, name: "renamed-third" },
      },
    ]);

    const gone = await lastEventId();
    await g.database.db.deleteFrom("devices").where("id", "in", ids).execute();
    expect((await eventsAfter(gone, "device")).map((e) => [e.event.action, e.event.id, e.event.data])).toEqual([
      ["deleted", "*", { count: 3 }],
    ]);
  });

  it("a statement over two organizations announces each its own devices, to its own organization", async () => {
    const other = await createAccountWithOwner(g.database.db, {
      accountName: "Other",
      orgName: "Other org",
      email: `device-events-${Date.now()}@example.com`,
      password: "other tenant password",
      passwordHashCost: 10,
    });
    const ours = [await insertDevice(g.org.id, "ours-1"), await insertDevice(g.org.id, "ours-2")];
    const theirs = await insertDevice(other.orgId, "theirs-1");
    const mark = await lastEventId();
    await g.database.db
      .updateTable("devices")
      .set({ is_approved: true })
      .where("id", "in", [...ours, theirs])
      .execute();
    const events = await eventsAfter(mark, "device");
    expect(events).toHaveLength(2);
    expect(events.find((e) => e.organization_id === g.org.id)!.event).toMatchObject({ id: "*", data: { count: 2 } });
    expect(events.find((e) => e.organization_id === other.orgId)!.event).toMatchObject({
      id: theirs,
      data: { isApproved: true, name: "theirs-1" },
    });
  });

  it("a fleet connecting and dropping: every device is counted once each way", async () => {
    const { fleet, devices } = await g.fleet(8, { connect: false, queueConfig: false });
    const ids = new Set(devices.map((d) => d.id));
    const mark = await lastEventId();
    await fleet.connectAll();
    const online = async () => {
      const rows = await g.database.db
        .selectFrom("devices")
        .select("id")
        .where("id", "in", [...ids])
        .where("connection", "=", "connected")
        .execute();
      return rows.length;
    };
    await waitUntil(online, (n) => n === 8);
    expect(announced(await eventsAfter(mark, "device"), "updated")).toBe(8);
    const dropped = await lastEventId();
    await fleet.disconnectAll();
    await waitUntil(online, (n) => n === 0);
    expect(announced(await eventsAfter(dropped, "device"), "updated")).toBe(8);
  });
});

describe("tunnel events per statement", () => {
  it("tunnels deleted together are one event; one tunnel changed keeps its id; a status column announces nothing", async () => {
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const mark = await lastEventId();
    const t1 = (await g.tunnel(devices[0]!, devices[1]!, { queue: false })).id;
    const t2 = (await g.tunnel(devices[1]!, devices[2]!, { queue: false })).id;
    expect((await eventsAfter(mark, "tunnel")).map((e) => [e.event.action, e.event.id])).toEqual([
      ["created", t1],
      ["created", t2],
    ]);
    const quiet = await lastEventId();
    await g.database.db.updateTable("tunnels").set({ pending_since: new Date() }).where("id", "in", [t1, t2]).execute();
    expect(await eventsAfter(quiet, "tunnel")).toEqual([]);
    const described = await lastEventId();
    await g.database.db
      .updateTable("tunnels")
      .set((eb) => ({ description: eb.case().when("id", "=", t2).then("the second").else(eb.ref("description")).end() }))
      .where("id", "in", [t1, t2])
      .execute();
    expect((await eventsAfter(described, "tunnel")).map((e) => e.event)).toEqual([
      { kind: "tunnel", action: "updated", id: t2, at: expect.any(String) },
    ]);
    const gone = await lastEventId();
    await g.database.db.deleteFrom("tunnels").where("id", "in", [t1, t2]).execute();
    expect((await eventsAfter(gone, "tunnel")).map((e) => e.event)).toEqual([
      { kind: "tunnel", action: "deleted", id: "*", at: expect.any(String), data: { count: 2 } },
    ]);
  });
});

describe("tunnel status events per flush", () => {
  it("several tunnels flipping in one flush are one event; one tunnel keeps its id and status", async () => {
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const t1 = (await g.tunnel(devices[0]!, devices[1]!, { queue: false })).id;
    const t2 = (await g.tunnel(devices[1]!, devices[2]!, { queue: false })).id;
    // A publisher of its own, fed flushes by the test (the server's listens to the server's gateway).
    const events = new GatewayEvents(pino({ level: "silent" }));
    const off = publishTunnelStatusEvents(g.database.db, events, pino({ level: "silent" }));
    try {
      const end = (tunnelId: string, deviceId: string, up: boolean) => ({
        tunnelId,
        deviceId,
        side: "a" as const,
        up,
        at: new Date(),
      });
      const mark = await lastEventId();
      events.emit("live-state-written", {
        devices: [],
        tunnelEnds: [end(t1, devices[0]!.id, true), end(t2, devices[1]!.id, true)],
      });
      const first = await waitUntil(
        () => eventsAfter(mark, "tunnel"),
        (e) => e.length > 0,
      );
      expect(first.map((e) => e.event)).toEqual([
        { kind: "tunnel", action: "updated", id: "*", at: expect.any(String), data: { count: 2 } },
      ]);
      const second = await lastEventId();
      // t2 reports up again (no flip), t1 goes down.
      events.emit("live-state-written", {
        devices: [],
        tunnelEnds: [end(t1, devices[0]!.id, false), end(t2, devices[1]!.id, true)],
      });
      const flipped = await waitUntil(
        () => eventsAfter(second, "tunnel"),
        (e) => e.length > 0,
      );
      expect(flipped.map((e) => e.event)).toEqual([
        { kind: "tunnel", action: "updated", id: t1, at: expect.any(String), data: { status: "Not Connected" } },
      ]);
    } finally {
      off();
    }
  });
});
