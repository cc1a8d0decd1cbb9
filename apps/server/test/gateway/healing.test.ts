/**
 * Healing on the server (docs/healing.md): agent reports recorded once with
 * their "after" figures, the learned baseline steering traffic off a link
 * that leaves it (and back), the organization's mode (act / suggest / off),
 * drift re-applied and recorded. The monitor runs on the real database; its
 * device link is a stand-in with the same serial chain.
 */
import { randomUUID } from "node:crypto";
import type { HealingFigures, Status } from "@tern/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { DeviceConnection } from "../../src/gateway/connection.ts";
import { HealingMonitor } from "../../src/gateway/live-state/healing-monitor.ts";
import { openDesiredConfig } from "../../src/services/desired-config-seal.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer();

/** A device link as far as the monitor needs one: ids, organization and the serial chain (awaitable). */
function linkOf(deviceId: string) {
  let chain: Promise<void> = Promise.resolve();
  const conn = {
    deviceId,
    device: { orgId: g.org.id, accountId: g.org.accountId, orgName: g.org.name },
    tunnelSides: new Map<string, "a" | "b">(),
    logger: pino({ level: "silent" }),
    serial(_what: string, fn: () => Promise<void>) {
      chain = chain.then(fn);
      return chain;
    },
  };
  return { conn: conn as unknown as DeviceConnection, idle: () => chain };
}

const status = (over: Partial<Status> = {}): Status => ({
  type: "status",
  at: new Date().toISOString(),
  appliedHash: null,
  applying: false,
  tunnels: [],
  interfaces: [],
  bgp: null,
  vrrp: [],
  health: null,
  ...over,
});

const actionsOf = (deviceId: string) =>
  g.database.db.selectFrom("healing_actions").selectAll().where("device_id", "=", deviceId).orderBy("at").execute();
const setMode = (mode: "act" | "suggest" | "off") =>
  g.database.db.updateTable("organizations").set({ healing_mode: mode }).where("id", "=", g.org.id).execute();

async function desiredHealing(deviceId: string) {
  const row = await g.database.db
    .selectFrom("devices")
    .select("desired_config_enc")
    .where("id", "=", deviceId)
    .executeTakeFirstOrThrow();
  return (openDesiredConfig(g.server.deps.keyring, deviceId, row.desired_config_enc!) as { healing?: unknown }).healing ?? null;
}

describe("healing monitor", () => {
  it("records an agent's report once however often it is re-sent, fills in its after figures, audits both", async () => {
    const { devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const { conn, idle } = linkOf(device.id);
    const monitor = new HealingMonitor(g.server.deps);
    const report = {
      id: "r-1",
      at: new Date().toISOString(),
      kind: "sa-reinitiate" as const,
      suggested: false,
      link: "tunnel:00000000-0000-4000-8000-000000000001",
      reason: "initiate CHILD_SA tern-device-1",
      before: { silentMs: 3100, child: "none" } as HealingFigures,
      after: null,
    };
    for (let i = 0; i < 3; i++) monitor.observe(conn, status({ healing: [report] }), [], new Date());
    monitor.observe(conn, status({ healing: [{ ...report, after: { restoredAfterMs: 420 } }] }), [], new Date());
    await idle();
    const rows = await actionsOf(device.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: "sa-reinitiate",
      source: "agent",
      mode: "act",
      // Not one of the device's tunnels: named in `link` only.
      tunnel_id: null,
      before: { silentMs: 3100, child: "none" },
      after: { restoredAfterMs: 420 },
    });
    const audit = await g.database.db
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("resource", "=", "healing")
      .where("resource_id", "=", rows[0]!.id)
      .orderBy("at")
      .execute();
    expect(audit).toEqual([
      { action: "healing:sa-reinitiate", actor: `device:${device.id}` },
      { action: "healing:sa-reinitiate:after", actor: `device:${device.id}` },
    ]);
  });

  it("learns a WAN's baseline, steers traffic off it when it leaves it (config healing.avoid), and back when it returns", async () => {
    await setMode("act");
    const { devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const { conn, idle } = linkOf(device.id);
    const monitor = new HealingMonitor(g.server.deps);
    const wan = (rtt: number) => status({ links: [{ name: "wan0", up: true, loss: 0, rtt, jitter: 1, samples: 300 }] });
    monitor.observe(conn, wan(10), [], new Date());
    await idle();
    for (let i = 0; i < 60; i++) monitor.observe(conn, wan(10 + (i % 3)), [], new Date());
    await idle();
    expect(await actionsOf(device.id)).toEqual([]);
    // Three reports in a row at 80 ms: a detour.
    for (let i = 0; i < 3; i++) monitor.observe(conn, wan(80), [], new Date());
    await idle();
    const [action] = await actionsOf(device.id);
    expect(action).toMatchObject({ kind: "reroute", source: "server", mode: "act", link: "wan:wan0", after: null });
    expect(action!.before).toMatchObject({ rtt: 80 });
    expect((action!.before as { rttBaseline: number }).rttBaseline).toBeLessThan(12);
    expect(await desiredHealing(device.id)).toEqual({ mode: "act", avoid: ["wan:wan0"] });
    const jobs = await g.database.db.selectFrom("jobs").select("tasks").where("device_id", "=", device.id).execute();
    expect(jobs.flatMap((j) => j.tasks.map((t) => t.kind))).toContain("healing");

    // Back to normal for six reports: the detour ends, the action gets its after figures.
    for (let i = 0; i < 6; i++) monitor.observe(conn, wan(10), [], new Date());
    await idle();
    const [done] = await actionsOf(device.id);
    expect(done!.after).toMatchObject({ rtt: 10 });
    expect(await desiredHealing(device.id)).toBeNull();
    const stored = await g.database.db
      .selectFrom("healing_baselines")
      .select(["rerouting"])
      .where("device_id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(stored.rerouting).toBe(false);
  });

  it("writes the baselines of devices due together in one statement, and a failed write is tried again at the next", async () => {
    const { devices } = await g.fleet(2, { connect: false });
    const monitor = new HealingMonitor(g.server.deps);
    const links = devices.map((d) => linkOf(d.id));
    const wan = status({ links: [{ name: "wan0", up: true, loss: 0, rtt: 12, jitter: 1, samples: 300 }] });
    for (const { conn, idle } of links) {
      monitor.observe(conn, wan, [], new Date());
      await idle();
      monitor.observe(conn, wan, [], new Date());
    }
    // The second device comes due 300 ms after the first: within the window, so in the same statement
    // (one statement, one updated_at; two statements would be at least 300 ms apart).
    const first = monitor.persist(links[0]!.conn);
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all([first, monitor.persist(links[1]!.conn)]);
    const rows = await g.database.db
      .selectFrom("healing_baselines")
      .select(["device_id", "updated_at"])
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => new Date(r.updated_at).getTime())).size).toBe(1);

    // A write that fails leaves the baseline changed: the next write carries what it had learnt. The
    // failure: the same state under a device id that is not in the table (the foreign key refuses it).
    const storedN = async () => {
      const row = await g.database.db
        .selectFrom("healing_baselines")
        .select("state")
        .where("device_id", "=", devices[0]!.id)
        .executeTakeFirstOrThrow();
      return (row.state as { baseline: { rtt: { all: { n: number } } } }).baseline.rtt.all.n;
    };
    expect(await storedN()).toBe(1);
    const { conn } = links[0]!;
    monitor.observe(conn, wan, [], new Date());
    const states = (monitor as unknown as { devices: WeakMap<DeviceConnection, unknown> }).devices;
    const stray = { ...conn, deviceId: randomUUID() } as DeviceConnection;
    states.set(stray, states.get(conn));
    await expect(monitor.persist(stray)).rejects.toThrow();
    await monitor.persist(conn);
    expect(await storedN()).toBe(2);
  });

  it("keeps the current hour in memory: the other hours stay stored and come back when their hour does", async () => {
    const { devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const { conn, idle } = linkOf(device.id);
    const monitor = new HealingMonitor(g.server.deps);
    const wan = status({ links: [{ name: "wan2", up: true, loss: 0, rtt: 15, jitter: 1, samples: 300 }] });
    const t0 = Date.now();
    const h0 = String(new Date(t0).getUTCHours());
    const h1 = String(new Date(t0 + 3_600_000).getUTCHours());
    const storedHours = async (m = monitor, c = conn) => {
      await m.persist(c);
      const row = await g.database.db
        .selectFrom("healing_baselines")
        .select("state")
        .where("device_id", "=", device.id)
        .where("link", "=", "wan:wan2")
        .executeTakeFirstOrThrow();
      const state = row.state as { baseline: { rtt: { all: { n: number }; hours: Record<string, { n: number }> } } };
      return {
        all: state.baseline.rtt.all.n,
        hours: Object.fromEntries(Object.entries(state.baseline.rtt.hours).map(([h, s]) => [h, s.n])),
      };
    };
    monitor.observe(conn, wan, [], new Date(t0));
    await idle();
    for (let i = 0; i < 5; i++) monitor.observe(conn, wan, [], new Date(t0));
    expect(await storedHours()).toEqual({ all: 5, hours: { [h0]: 5 } });
    // The next hour: it has nothing stored, so its samples count from the first one.
    for (let i = 0; i < 3; i++) monitor.observe(conn, wan, [], new Date(t0 + 3_600_000));
    await idle();
    expect(await storedHours()).toEqual({ all: 8, hours: { [h0]: 5, [h1]: 3 } });
    // A day later the first hour comes back with its stored statistics (the sample learnt while they were read is not kept).
    monitor.observe(conn, wan, [], new Date(t0 + 86_400_000));
    await idle();
    monitor.observe(conn, wan, [], new Date(t0 + 86_400_000));
    expect(await storedHours()).toEqual({ all: 10, hours: { [h0]: 6, [h1]: 3 } });
    // A new link of the device starts from the stored state, all hours kept.
    const next = linkOf(device.id);
    const monitor2 = new HealingMonitor(g.server.deps);
    monitor2.observe(next.conn, wan, [], new Date(t0));
    await next.idle();
    monitor2.observe(next.conn, wan, [], new Date(t0));
    expect(await storedHours(monitor2, next.conn)).toEqual({ all: 11, hours: { [h0]: 7, [h1]: 3 } });
  });

  it("in mode suggest the detour is only recorded; in mode off nothing is", async () => {
    const { devices } = await g.fleet(2, { connect: false });
    const run = async (deviceId: string) => {
      const { conn, idle } = linkOf(deviceId);
      const monitor = new HealingMonitor(g.server.deps);
      const wan = (rtt: number) => status({ links: [{ name: "wan1", up: true, loss: 0, rtt, jitter: 1, samples: 300 }] });
      monitor.observe(conn, wan(10), [], new Date());
      await idle();
      for (let i = 0; i < 60; i++) monitor.observe(conn, wan(10 + (i % 3)), [], new Date());
      for (let i = 0; i < 3; i++) monitor.observe(conn, wan(90), [], new Date());
      await idle();
      return actionsOf(deviceId);
    };
    try {
      await setMode("suggest");
      const suggested = await run(devices[0]!.id);
      expect(suggested.map((a) => [a.kind, a.mode])).toEqual([["reroute", "suggest"]]);
      expect(await desiredHealing(devices[0]!.id)).toBeNull();
      await setMode("off");
      expect(await run(devices[1]!.id)).toEqual([]);
    } finally {
      await setMode("act");
    }
  });
});

describe("drift re-apply and the mode", () => {
  const deviceRow = (id: string) =>
    g.database.db.selectFrom("devices").select(["desired_hash"]).where("id", "=", id).executeTakeFirstOrThrow();
  const jobsOf = (id: string) => g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", id).execute();

  it("act: the automatic re-sync is recorded with the hashes, and completed once the device reports the desired one", async () => {
    const { fleet, devices } = await g.fleet(1);
    const device = devices[0]!;
    await waitUntil(
      () => jobsOf(device.id),
      (j) => j.length === 1 && j[0]!.state === "complete",
    );
    const sim = fleet.device(0);
    await sim.disconnect();
    sim.appliedHash = null;
    await sim.connect();
    const desired = (await deviceRow(device.id)).desired_hash;
    const rows = await waitUntil(
      () => actionsOf(device.id),
      (a) => a.length === 1 && a[0]!.after !== null,
    );
    expect(rows[0]).toMatchObject({
      kind: "reapply",
      mode: "act",
      source: "server",
      link: "device",
      before: { reportedHash: "none", desiredHash: desired, attempt: 1 },
      after: { reportedHash: desired, inSync: true },
    });
  });

  it("suggest: no re-sync, one suggestion however often the device reconnects", async () => {
    const { fleet, devices } = await g.fleet(1);
    const device = devices[0]!;
    await waitUntil(
      () => jobsOf(device.id),
      (j) => j.length === 1 && j[0]!.state === "complete",
    );
    await setMode("suggest");
    try {
      const sim = fleet.device(0);
      for (let i = 0; i < 2; i++) {
        await sim.disconnect();
        sim.appliedHash = null;
        await sim.connect();
        await new Promise((r) => setTimeout(r, 300));
      }
      const rows = await waitUntil(
        () => actionsOf(device.id),
        (a) => a.length >= 1,
      );
      expect(rows.map((a) => [a.kind, a.mode])).toEqual([["reapply", "suggest"]]);
      expect(await jobsOf(device.id)).toHaveLength(1);
    } finally {
      await setMode("act");
    }
  });
});
