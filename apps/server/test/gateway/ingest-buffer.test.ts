/**
 * The ingest buffer on its own, against the real database: a backlog larger
 * than one flush pass is written pass after pass without waiting for the next
 * flush tick, and a failed write does not spin (the next try waits a tick);
 * the COPY path (PostgreSQL) stores exactly what the unnest path stores; the
 * back-pressure signal rises at the high-water mark and falls once drained;
 * samples that find no partition of the day make it, and are written by the
 * next flush.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { IngestBuffer, type SampleRow, type StateRow } from "../../src/gateway/live-state/ingest-buffer.ts";
import { copyLines, copyWriterPool } from "../../src/gateway/live-state/sample-copy.ts";
import { createServerMetrics } from "../../src/metrics/server-metrics.ts";
import { openTestDatabase, testDatabaseKind } from "../support/test-database.ts";

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

const samplesOf = (n: number, deviceId: string): SampleRow[] =>
  Array.from({ length: n }, (_, i) => ({
    tunnelId: randomUUID(),
    deviceId,
    side: i % 2 ? "b" : "a",
    at: new Date(),
    up: true,
    loss: 0,
    rtt: 1 + (i % 10),
    jitter: 0,
    samples: 30,
    windowMs: 30_000,
    sent: 1000 + i,
    received: 990 + i,
  }));
// A device that does not exist: its state row is skipped by the writer, its samples are kept.
const stateOf = (deviceId: string): StateRow => ({
  deviceId,
  orgId: randomUUID(),
  reportedAt: new Date(),
  appliedHash: null,
  applying: false,
  interfaces: [],
  bgp: null,
  vrrp: [],
  health: null,
});

async function sampleCount(deviceId: string): Promise<number> {
  const row = await database.db
    .selectFrom("tunnel_samples")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("device_id", "=", deviceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("ingest buffer", () => {
  it("writes a backlog of several passes in one flush, without waiting for the flush interval", async () => {
    const deviceId = randomUUID();
    // The interval is never started here (no start()): only the flush calls below write.
    const buffer = new IngestBuffer(database.db, createServerMetrics(), pino({ level: "silent" }), {
      batchRows: 1000,
      flushMs: 3_600_000,
      maxBuffered: 200_000,
    });
    // 120,000 samples: more than two passes of 50,000.
    for (let i = 0; i < 120; i++) buffer.add(stateOf(deviceId), samplesOf(1000, deviceId));
    await buffer.flush();
    expect(buffer.buffered).toBe(0);
    expect(await sampleCount(deviceId)).toBe(120_000);
    const passes = buffer.recent.map((r) => r.samples);
    expect(passes.reduce((a, b) => a + b, 0)).toBe(120_000);
    expect(Math.max(...passes)).toBeLessThanOrEqual(50_000);
    expect(passes.length).toBeGreaterThanOrEqual(3);
  }, 90_000); // 120,000 rows: tens of seconds on a loaded 2-core machine

  it("stops after a failed write instead of retrying in a loop, and keeps the rows for the next flush", async () => {
    const deviceId = randomUUID();
    const metrics = createServerMetrics();
    let failing = true;
    let writes = 0;
    // The real database behind a switch: while `failing`, every transaction fails.
    const db = new Proxy(database.db, {
      get(target, prop, receiver) {
        if (prop === "transaction")
          return () => {
            writes++;
            if (failing) return { execute: () => Promise.reject(Object.assign(new Error("down"), { code: "57P01" })) };
            return target.transaction();
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    const buffer = new IngestBuffer(db, metrics, pino({ level: "silent" }), {
      batchRows: 100,
      flushMs: 3_600_000,
      maxBuffered: 10_000,
    });
    for (let i = 0; i < 30; i++) buffer.add(stateOf(deviceId), samplesOf(100, deviceId));
    await buffer.flush();
    // A few queued flush requests may each try once; a backlog never makes one flush try again and again.
    const tries = writes;
    expect(tries).toBeGreaterThanOrEqual(1);
    expect(tries).toBeLessThanOrEqual(3);
    expect(buffer.buffered).toBe(3000);
    failing = false;
    await buffer.flush();
    expect(buffer.buffered).toBe(0);
    expect(await sampleCount(deviceId)).toBe(3000);
    expect((await metrics.ingestWriteFailures.get()).values[0]?.value).toBe(tries);
  });

  it("raises back-pressure at the high-water mark and relieves it once a write brings the buffer down", async () => {
    const deviceId = randomUUID();
    const metrics = createServerMetrics();
    const buffer = new IngestBuffer(database.db, metrics, pino({ level: "silent" }), {
      batchRows: 1_000_000,
      flushMs: 3_600_000,
      maxBuffered: 400,
    });
    let relieved = 0;
    buffer.onRelieved = () => relieved++;
    for (let i = 0; i < 49; i++) buffer.add(stateOf(deviceId), samplesOf(4, deviceId));
    expect(buffer.pressing).toBe(false);
    // 200 = half of maxBuffered: the gateway stops reading the links that report.
    buffer.add(stateOf(deviceId), samplesOf(4, deviceId));
    expect(buffer.pressing).toBe(true);
    // What still comes in (already read from a socket) is kept, not dropped, up to maxBuffered.
    for (let i = 0; i < 40; i++) buffer.add(stateOf(deviceId), samplesOf(4, deviceId));
    expect(buffer.buffered).toBe(360);
    await buffer.flush();
    expect(buffer.pressing).toBe(false);
    expect(relieved).toBe(1);
    expect(await sampleCount(deviceId)).toBe(360);
    expect((await metrics.ingestDropped.get()).values.reduce((n, v) => n + v.value, 0)).toBe(0);
    expect((await metrics.ingestPauses.get()).values[0]?.value).toBe(1);
  });

  it("writes only samples in a backlog's passes until flushMs has passed since the last state write", async () => {
    const deviceId = randomUUID();
    let written = 0;
    const buffer: IngestBuffer = new IngestBuffer(
      database.db,
      createServerMetrics(),
      pino({ level: "silent" }),
      { batchRows: 1000, flushMs: 3_600_000, maxBuffered: 500_000 },
      // After the first pass another device reports (a state, no samples): the backlog's next pass leaves it
      // waiting, the pass that ends the backlog writes it.
      () => {
        if (written++ === 0) buffer.add(stateOf(randomUUID()), []);
      },
    );
    for (let i = 0; i < 120; i++) buffer.add(stateOf(deviceId), samplesOf(1000, deviceId));
    await buffer.flush();
    expect(buffer.recent.map((r) => [r.samples, r.states])).toEqual([
      [50_000, 1],
      [50_000, 0],
      [20_000, 1],
    ]);
    expect(await sampleCount(deviceId)).toBe(120_000);
  }, 90_000); // 120,000 rows: tens of seconds on a loaded 2-core machine
});

const onPostgres = testDatabaseKind() === "postgres";
describe.runIf(onPostgres)("ingest buffer, COPY path (PostgreSQL)", () => {
  it("stores the same samples, latest values and device states as the unnest path", async () => {
    // Random tunnel and device ids: the tables have no foreign keys to them (states of unknown devices are skipped).
    const awkward = (deviceId: string, tunnelId: string, i: number): SampleRow => ({
      tunnelId,
      deviceId,
      side: i % 2 ? "b" : "a",
      // Today's partition (the migration made it; one for 2026-01-01 would not exist).
      at: new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + i * 1000 + 123),
      up: i % 3 !== 0,
      loss: i === 0 ? 0 : 100 / 3,
      rtt: i === 1 ? 1e-7 : 12.345678,
      jitter: i === 2 ? 0.1 + 0.2 : 0,
      samples: i,
      windowMs: i % 2 ? null : 30_000,
      sent: i % 2 ? null : 2 ** 40 + i,
      received: i % 2 ? null : 2 ** 40,
    });
    const write = async (copy: boolean) => {
      const deviceId = randomUUID();
      const pool = copy ? copyWriterPool(database.url!) : undefined;
      const buffer = new IngestBuffer(
        database.db,
        createServerMetrics(),
        pino({ level: "silent" }),
        { batchRows: 1000, flushMs: 1000, maxBuffered: 10_000 },
        () => {},
        pool,
      );
      const tunnels = [randomUUID(), randomUUID()];
      for (let i = 0; i < 6; i++) buffer.add(stateOf(deviceId), [awkward(deviceId, tunnels[i % 2]!, i)]);
      await buffer.flush();
      await pool?.end();
      const rows = await sql<Record<string, unknown>>`select tunnel_id, side, at, up, loss, rtt, jitter, samples, window_ms,
          sent, received from tunnel_samples where device_id = ${deviceId} order by at`.execute(database.db);
      const latest = await sql<Record<string, unknown>>`select tunnel_id, side, at, up, loss, rtt, jitter, samples, window_ms,
          sent, received from tunnel_latest where device_id = ${deviceId} order by at`.execute(database.db);
      // Ids differ between the two writes; each row names its tunnel by position.
      const pos = (r: Record<string, unknown>) => ({ ...r, tunnel_id: (tunnels as string[]).indexOf(r.tunnel_id as string) });
      return { samples: rows.rows.map(pos), latest: latest.rows.map(pos) };
    };
    const viaUnnest = await write(false);
    const viaCopy = await write(true);
    expect(viaUnnest.samples.length).toBe(6);
    expect(viaCopy).toEqual(viaUnnest);
  });

  it("makes the day's partition when samples find none, keeps them and writes them at the next flush", async () => {
    const paths = testDatabaseKind() === "postgres" ? [false, true] : [false];
    for (const copy of paths) {
      const deviceId = randomUUID();
      const today = `tunnel_samples_p${new Date().toISOString().replace(/[-T:]/g, "").slice(0, 8)}00`;
      // As a server stopped for longer than the partitions made ahead would find it.
      await sql`drop table ${sql.table(today)}`.execute(database.db);
      const metrics = createServerMetrics();
      const pool = copy ? copyWriterPool(database.url!) : undefined;
      const buffer = new IngestBuffer(
        database.db,
        metrics,
        pino({ level: "silent" }),
        { batchRows: 1000, flushMs: 3_600_000, maxBuffered: 10_000 },
        () => {},
        pool,
      );
      buffer.add(stateOf(deviceId), samplesOf(50, deviceId));
      await buffer.flush();
      expect(buffer.buffered, copy ? "COPY" : "insert").toBe(50);
      expect((await metrics.ingestWriteFailures.get()).values[0]?.value).toBe(1);
      const made = await sql<{ n: number }>`select count(*)::int as n from pg_class where relname = ${today}`.execute(
        database.db,
      );
      expect(made.rows[0]!.n).toBe(1);
      await buffer.flush();
      await pool?.end();
      expect(buffer.buffered).toBe(0);
      expect(await sampleCount(deviceId)).toBe(50);
      expect((await metrics.ingestDropped.get()).values.reduce((n, v) => n + v.value, 0)).toBe(0);
    }
  });

  it("renders COPY's text format with \\N for nulls and ISO times", () => {
    const row: SampleRow = {
      tunnelId: "t",
      deviceId: "d",
      side: "b",
      at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
      up: false,
      loss: 1.5,
      rtt: 2,
      jitter: 0,
      samples: 3,
      windowMs: null,
      sent: null,
      received: 7,
    };
    expect(copyLines([row])).toBe("t\td\tb\t2026-01-02T03:04:05.006Z\tf\t1.5\t2\t0\t3\t\\N\t\\N\t7\n");
  });
});
