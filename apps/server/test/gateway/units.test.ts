/** Small parts of the gateway on their own: the rate limit bucket, inbound parsing, the duty claim. */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { AGAIN_DELAY_MS, DutyRunner } from "../../src/gateway/duties.ts";
import { parseInbound } from "../../src/gateway/inbound.ts";
import { TokenBucket } from "../../src/gateway/token-bucket.ts";
import { createServerMetrics } from "../../src/metrics/server-metrics.ts";
import { waitUntil } from "../support/gateway.ts";
import { openTestDatabase } from "../support/test-database.ts";

const FIXTURES = join(import.meta.dirname, "../../../../packages/protocol/fixtures/v1/DeviceMessage");

describe("TokenBucket", () => {
  it("allows the burst, then the rate", () => {
    const bucket = new TokenBucket(10, 5, 0);
    const taken = Array.from({ length: 7 }, () => bucket.take(0));
    expect(taken).toEqual([true, true, true, true, true, false, false]);
    expect(bucket.take(100)).toBe(true); // 100 ms at 10/s = one token
    expect(bucket.take(100)).toBe(false);
    expect(bucket.take(10_000)).toBe(true);
  });
});

describe("parseInbound", () => {
  it("accepts the protocol's valid device messages and refuses the invalid ones with a reason", () => {
    for (const file of readdirSync(FIXTURES)) {
      const parsed = parseInbound(readFileSync(join(FIXTURES, file)), false);
      if (file.startsWith("valid")) expect(parsed.ok, file).toBe(true);
      else {
        expect(parsed.ok, file).toBe(false);
        if (!parsed.ok) expect(parsed.code).toBe("VALIDATION_FAILED");
      }
    }
  });

  it("names what is wrong", () => {
    expect(parseInbound(Buffer.from("{"), false)).toMatchObject({ ok: false, kind: "not-json", code: "BAD_MESSAGE" });
    expect(parseInbound(Buffer.from("{}"), true)).toMatchObject({ ok: false, message: expect.stringMatching(/binary/) });
    const bad = parseInbound(Buffer.from(JSON.stringify({ type: "hello", protocolVersion: "one" })), false);
    expect(bad).toMatchObject({ ok: false, message: expect.stringMatching(/type "hello".*protocolVersion/) });
  });
});

describe("DutyRunner", () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it("lets one of several runners claim each interval, and undoes the claim of a failed run", async () => {
    let runs = 0;
    let failNext = true;
    const duty = {
      name: `test-${randomUUID()}`,
      async run() {
        if (failNext) {
          failNext = false;
          throw new Error("first run fails");
        }
        runs++;
      },
    };
    const logger = pino({ level: "silent" });
    const runners = [1, 2, 3].map(() => new DutyRunner(database.db, randomUUID(), [duty], 60_000, createServerMetrics(), logger));
    for (const r of runners) {
      await r.start();
      await r.stop();
    }
    // The first claim fails and is rolled back; the next pass claims again; later passes find it done.
    for (let i = 0; i < 3; i++) await Promise.all(runners.map((r) => r.tick()));
    expect(runs).toBe(1);
    const row = await database.db
      .selectFrom("gateway_duties")
      .selectAll()
      .where("name", "=", duty.name)
      .executeTakeFirstOrThrow();
    expect(Number(row.runs)).toBe(1);
    expect(runners.reduce((n, r) => n + (r.ran.get(duty.name) ?? 0), 0)).toBe(1);
  });

  it("an idle tick reads which duties are due in one statement and runs nothing else", async () => {
    const statements: string[] = [];
    const counted = database.db.withPlugin({
      transformQuery: (args) => {
        statements.push(args.node.kind);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const runs = new Map<string, number>();
    const duties = [1, 2, 3].map(() => {
      const name = `test-${randomUUID()}`;
      return { name, run: async () => void runs.set(name, (runs.get(name) ?? 0) + 1) };
    });
    const runner = new DutyRunner(counted, randomUUID(), duties, 60_000, createServerMetrics(), pino({ level: "silent" }));
    await runner.start();
    await runner.stop();
    statements.length = 0;
    // All three are due: the read, then each one's lock and claim.
    await runner.tick();
    expect([...runs.values()]).toEqual([1, 1, 1]);
    expect(statements).toEqual(["SelectQueryNode", ...duties.flatMap(() => ["RawNode", "UpdateQueryNode"])]);
    statements.length = 0;
    // None is due for 60 s: a tick is the read alone (it was a transaction with two statements per duty).
    for (let i = 0; i < 5; i++) await runner.tick();
    expect(statements).toEqual(Array(5).fill("SelectQueryNode"));
    expect([...runs.values()]).toEqual([1, 1, 1]);
  });

  it("runs a duty that left work again at the next tick, then waits its interval", async () => {
    let left = 2;
    const duty = {
      name: `test-${randomUUID()}`,
      async run(): Promise<"again" | undefined> {
        if (left === 0) return undefined;
        left--;
        return "again";
      },
    };
    const runner = new DutyRunner(database.db, randomUUID(), [duty], 60_000, createServerMetrics(), pino({ level: "silent" }));
    await runner.start();
    await runner.stop();
    for (let i = 0; i < 5; i++) await runner.tick();
    // Two runs that left work, one that finished it, then nothing before the 60 s interval is over.
    expect(runner.ran.get(duty.name)).toBe(3);
    expect(left).toBe(0);
  });

  it("a started runner runs a duty that left work again soon, not at its next regular tick", async () => {
    const at: number[] = [];
    const duty = {
      name: `test-${randomUUID()}`,
      async run(): Promise<"again" | undefined> {
        at.push(performance.now());
        return at.length < 4 ? "again" : undefined;
      },
    };
    // A 60 s interval: the regular tick is every 1,000 ms, so four runs on it alone span at least 3 s.
    const runner = new DutyRunner(database.db, randomUUID(), [duty], 60_000, createServerMetrics(), pino({ level: "silent" }));
    await runner.start();
    try {
      await waitUntil(
        () => at.length,
        (n) => n >= 4,
        10_000,
        "four runs",
      );
      expect(at).toHaveLength(4);
      // Three runs AGAIN_DELAY_MS (100 ms) after the one before, plus their transactions.
      expect(at[3]! - at[0]!).toBeLessThan(2000);
      // Done: nothing more before the interval is over.
      await new Promise((r) => setTimeout(r, 3 * AGAIN_DELAY_MS));
      expect(at).toHaveLength(4);
    } finally {
      await runner.stop();
    }
  });
});
