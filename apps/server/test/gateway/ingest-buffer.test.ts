/**
 * The ingest buffer on its own, against the real database: a backlog larger
 * than one flush pass is written pass after pass without waiting for the next
 * flush tick, and a failed write does not spin (the next try waits a tick).
 */
import { randomUUID } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { IngestBuffer, type SampleRow, type StateRow } from "../../src/gateway/live-state/ingest-buffer.ts";
import { createServerMetrics } from "../../src/metrics/server-metrics.ts";
import { openTestDatabase } from "../support/test-database.ts";

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
  });

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
});
