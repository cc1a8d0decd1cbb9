/**
 * Several server instances on one PostgreSQL database work as one: a job
 * queued on B for a device whose link A holds reaches it (NOTIFY), requests
 * are routed to the holder, a newer link on B replaces the one on A, and each
 * periodic duty runs once per interval across instances (advisory lock and
 * claim). PostgreSQL only: embedded PGlite belongs to one process.
 */
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server.ts";
import { inTransaction, systemCtx } from "../../src/services/context.ts";
import { queueConfigJobs } from "../../src/services/desired-config.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const onPostgres = testDatabaseKind() === "postgres";
if (!onPostgres)
  console.warn("instances.test.ts: several instances need PostgreSQL; skipped on PGlite (it runs in the postgres project)");

describe.runIf(onPostgres)("two server instances on one PostgreSQL", () => {
  const g = useGatewayServer();
  let a: RunningServer;
  let b: RunningServer;
  let fleet: Simulator;
  let devices: SimRow[];

  beforeAll(async () => {
    a = g.server;
    b = await g.startAnother();
    // The devices connect to A only.
    ({ fleet, devices } = await g.fleet(3));
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 3,
    );
  });

  it("runs as two instances with one key", async () => {
    expect(a.gateway.instanceId).not.toBe(b.gateway.instanceId);
    const rows = await g.database.db.selectFrom("gateway_instances").select("id").execute();
    expect(rows.map((r) => r.id).sort()).toEqual([a.gateway.instanceId, b.gateway.instanceId].sort());
    const sessions = await g.database.db
      .selectFrom("device_sessions")
      .select("instance_id")
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    expect(sessions.every((s) => s.instance_id === a.gateway.instanceId)).toBe(true);
  });

  it("delivers a job queued on B to a device connected to A, promptly", async () => {
    const device = devices[0]!;
    const routes = [{ destination: "172.31.7.0/24", gateway: "100.64.0.1", ifname: "", metric: 0 }];
    const started = performance.now();
    const { jobIds } = await inTransaction(systemCtx(b.deps, g.org), async (tx) => {
      await tx.db
        .updateTable("devices")
        .set({ static_routes: JSON.stringify(routes) })
        .where("id", "=", device.id)
        .execute();
      return queueConfigJobs(tx, { deviceIds: [device.id], type: "modify", tasks: [{ kind: "route", summary: "via B" }] });
    });
    const [job] = await g.waitForJobs(jobIds, "complete", 5000);
    const ms = performance.now() - started;
    console.log(`cross-instance dispatch: queued on B, completed by the device on A in ${ms.toFixed(0)} ms`);
    expect(job!.apply_id).toBeTruthy();
    expect(b.gateway.link(device.id)).toBeUndefined();
    expect(a.gateway.link(device.id)?.state).toBe("ready");
  });

  it("routes requestFromDevice on B to the instance holding the link", async () => {
    const answer = await b.deps.deviceLink.requestFromDevice(devices[1]!.id, "interface-status", { devId: "pci:0000:00:04.0" });
    expect(answer).toMatchObject({ ok: true, result: { name: "eth1" } });
    expect(await b.deps.deviceLink.requestFromDevice(devices[1]!.id, "ping", { target: "10.0.0.9", count: 1 })).toMatchObject({
      ok: true,
    });
  });

  it("routes an answer too large for a notification through the database", async () => {
    const {
      devices: [d],
    } = await g.fleet(1, { connect: false, queueConfig: false });
    const raw = await openRawLink(a.url, d!.token, d!);
    raw.send(helloFor(d!.machineId));
    await raw.next("welcome");
    const answer = b.deps.deviceLink.requestFromDevice(d!.id, "traceroute", { target: "10.0.0.9" }, 5000);
    const req = await raw.next("request");
    const output = "hop ".repeat(5000);
    raw.send({ type: "response", id: req.id, ok: true, result: { output } });
    expect(await answer).toEqual({ ok: true, result: { output } });
    expect(await g.database.db.selectFrom("gateway_replies").select("id").execute()).toEqual([]);
    raw.ws.close();
  });

  it("streams a request's lines from the holder to B as they come, and B's cancel reaches the device", async () => {
    const {
      devices: [d],
    } = await g.fleet(1, { connect: false, queueConfig: false });
    const raw = await openRawLink(a.url, d!.token, d!);
    raw.send(helloFor(d!.machineId));
    await raw.next("welcome");
    const lines: string[][] = [];
    const abort = new AbortController();
    const answer = b.deps.deviceLink
      .requestFromDevice(d!.id, "ping", { target: "10.0.0.9", count: 50 }, 30_000, {
        onProgress: (l) => lines.push(l),
        signal: abort.signal,
      })
      .catch((err: { code?: string }) => err.code);
    const req = await raw.next("request", (m) => m.method === "ping");
    raw.send({ type: "request-progress", id: req.id, seq: 0, lines: ["PING 10.0.0.9"] });
    await waitUntil(
      () => lines.length,
      (n) => n === 1,
      5000,
      "the first line on B",
    );
    // Many lines at once, more than one NOTIFY holds: split, none lost, in order.
    const many = Array.from({ length: 20 }, (_, i) => `64 bytes from 10.0.0.9: icmp_seq=${i} ${"x".repeat(280)}`.slice(0, 300));
    raw.send({ type: "request-progress", id: req.id, seq: 1, lines: many });
    await waitUntil(
      () => lines.flat().length,
      (n) => n === 21,
      5000,
      "the next lines on B",
    );
    expect(lines.flat()).toEqual(["PING 10.0.0.9", ...many]);
    abort.abort();
    expect(await answer).toBe("REQUEST_CANCELLED");
    const cancel = await raw.next("request", (m) => m.method === "cancel");
    expect(cancel.params).toEqual({ id: req.id });
    raw.ws.close();
  });

  it("replaces a link on A when the same device connects to B (4009 on A)", async () => {
    const device = devices[2]!;
    const closed = fleet.device(2).waitFor("closed", { timeoutMs: 5000 });
    const raw = await openRawLink(b.url, device.token, device);
    raw.send(helloFor(device.machineId, { appliedHash: fleet.device(2).appliedHash }));
    await raw.next("welcome");
    expect(await closed).toMatchObject({ code: 4009 });
    const session = await g.database.db
      .selectFrom("device_sessions")
      .select("instance_id")
      .where("device_id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(session.instance_id).toBe(b.gateway.instanceId);
    const row = await g.database.db
      .selectFrom("devices")
      .select("connection")
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(row.connection).toBe("connected");
    raw.ws.close();
  });

  it("runs each periodic duty once per interval across both instances", async () => {
    const runs = async () =>
      Number(
        (
          await g.database.db
            .selectFrom("gateway_duties")
            .select("runs")
            .where("name", "=", "retention")
            .executeTakeFirstOrThrow()
        ).runs,
      );
    const ranBy = () => (a.gateway.duties.ran.get("retention") ?? 0) + (b.gateway.duties.ran.get("retention") ?? 0);
    const before = { runs: await runs(), ran: ranBy(), at: performance.now() };
    // Both instances tick on their own timers; also force many concurrent ticks.
    for (let i = 0; i < 20; i++) {
      await Promise.all([a.gateway.duties.tick(), b.gateway.duties.tick()]);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const elapsed = performance.now() - before.at;
    const done = (await runs()) - before.runs;
    expect(ranBy() - before.ran).toBe(done);
    const interval = g.config.TERN_DUTY_INTERVAL_MS;
    expect(done).toBeGreaterThanOrEqual(Math.floor(elapsed / interval / 2));
    expect(done).toBeLessThanOrEqual(Math.ceil(elapsed / interval) + 1);
    console.log(
      `duties: ${done} retention runs in ${elapsed.toFixed(0)} ms at a ${interval} ms interval (A ${a.gateway.duties.ran.get("retention")}, B ${b.gateway.duties.ran.get("retention")})`,
    );
  });

  it("times out an orphaned running job exactly once", async () => {
    const {
      devices: [d],
    } = await g.fleet(1, { connect: false });
    const [job] = await g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", d!.id).execute();
    const timedOut = async () => {
      let total = 0;
      for (const s of [a, b]) total += (await s.deps.metrics.jobsTimedOut.get()).values[0]?.value ?? 0;
      return total;
    };
    const before = await timedOut();
    await g.database.db
      .updateTable("jobs")
      .set({ state: "running", apply_id: "orphan", sent_hash: job!.target_hash, started_at: sql`now() - interval '1 hour'` })
      .where("id", "=", job!.id)
      .execute();
    await g.waitForJobs([job!.id], "failed");
    await new Promise((r) => setTimeout(r, 500));
    expect((await timedOut()) - before).toBe(1);
  });

  it("takes back the links of an instance wrongly presumed dead", async () => {
    const device = devices[1]!;
    const columns = () =>
      g.database.db
        .selectFrom("devices")
        .select(["agent_version", "protocol_version", "hostname", "applied_hash"])
        .where("id", "=", device.id)
        .executeTakeFirstOrThrow();
    const welcomed = await columns();
    expect(welcomed.agent_version).toBeTruthy();
    expect(welcomed.applied_hash).toBeTruthy();
    // A welcomed link no longer holds its hello: the re-claim does not need it.
    expect(a.gateway.link(device.id)?.hello).toBeNull();
    // A's heartbeat looks an hour old: a duty (on either instance) reaps A and disconnects its devices.
    await g.database.db
      .updateTable("gateway_instances")
      .set({ heartbeat_at: sql`now() - interval '1 hour'` })
      .where("id", "=", a.gateway.instanceId)
      .execute();
    // A's next heartbeat notices and re-claims the links it still holds.
    await waitUntil(
      () =>
        g.database.db.selectFrom("device_sessions").select("instance_id").where("device_id", "=", device.id).executeTakeFirst(),
      (s) => s?.instance_id === a.gateway.instanceId,
    );
    const row = await waitUntil(
      () => g.database.db.selectFrom("devices").select("connection").where("id", "=", device.id).executeTakeFirstOrThrow(),
      (r) => r.connection === "connected",
    );
    expect(row.connection).toBe("connected");
    expect(a.gateway.link(device.id)?.state).toBe("ready");
    // What the hello wrote is left as it was; the applied hash is the link's.
    expect(await columns()).toEqual({ ...welcomed, applied_hash: a.gateway.link(device.id)!.appliedHash });
  });
});
