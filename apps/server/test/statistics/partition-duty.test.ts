/**
 * The partition duty works in slices (issue 14: a new database lacks about
 * 130 partitions, and making them in one transaction held PGlite's only
 * connection for about a second while every request waited): at most
 * PARTITIONS_PER_RUN creates and drops per run, the earliest partitions
 * first, until nothing is left, with the same partitions in the end as
 * ensurePartitions and dropExpiredPartitions make at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { PARTITIONS_PER_RUN } from "../../src/services/statistics/duties.ts";
import {
  dropExpiredPartitions,
  ensurePartitions,
  listPartitions,
  maintainPartitions,
} from "../../src/services/statistics/partitions.ts";
import { DAY_MS, HOUR_MS, PARTITIONED_TABLES } from "../../src/services/statistics/settings.ts";
import { TEST_STATISTICS_SETTINGS } from "../support/statistics-settings.ts";
import { openTestDatabase } from "../support/test-database.ts";

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

async function allPartitions(): Promise<string[]> {
  const names: string[] = [];
  for (const t of PARTITIONED_TABLES) names.push(...(await listPartitions(database.db, t.table)).map((p) => p.name));
  return names.sort();
}

/** Runs the duty's step until it says nothing is left; the work done by each run. */
async function runUntilDone(now: number): Promise<{ created: number; dropped: string[] }[]> {
  const runs: { created: number; dropped: string[] }[] = [];
  for (let more = true; more; ) {
    const r = await maintainPartitions(database.db, TEST_STATISTICS_SETTINGS, PARTITIONS_PER_RUN, now);
    runs.push(r);
    more = r.more;
    if (runs.length > 1000) throw new Error("the partition duty never finished");
  }
  return runs;
}

describe("partition duty in slices", () => {
  it("makes a new database's partitions a few per run, the current hour's first, until none is missing", async () => {
    const now = Date.now();
    const before = await allPartitions();
    const runs = await runUntilDone(now);
    for (const r of runs) expect(r.created + r.dropped.length).toBeLessThanOrEqual(PARTITIONS_PER_RUN);
    const created = runs.reduce((n, r) => n + r.created, 0);
    expect(runs.length).toBe(Math.ceil(created / PARTITIONS_PER_RUN) || 1);
    expect(created).toBeGreaterThan(PARTITIONS_PER_RUN);
    // The first run made the partitions that hold this hour's rows.
    const hour = new Date(Math.floor(now / HOUR_MS) * HOUR_MS).toISOString().slice(0, 13).replace(/[-T]/g, "");
    const first = runs[0]!;
    expect(first.created).toBe(PARTITIONS_PER_RUN);
    const after = await allPartitions();
    expect(after).toContain(`stat_if_raw_p${hour}`);
    expect(after.length - before.length).toBe(created);
    // Nothing left that the one-shot functions would make or drop.
    expect(await ensurePartitions(database.db, now)).toBe(0);
    expect(await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, now)).toEqual([]);
  });

  it("ten days later: makes what is missing ahead, drops what expired, a few per run", async () => {
    const later = Date.now() + 10 * DAY_MS;
    const runs = await runUntilDone(later);
    for (const r of runs) expect(r.created + r.dropped.length).toBeLessThanOrEqual(PARTITIONS_PER_RUN);
    const dropped = runs.flatMap((r) => r.dropped);
    expect(dropped.length).toBeGreaterThan(0);
    for (const name of dropped) expect(name).toMatch(/^stat_(if|health)_raw_p|^stat_(if|health|tunnel)_1m_p|^tunnel_samples_p/);
    const left = await allPartitions();
    for (const name of dropped) expect(left).not.toContain(name);
    expect(await ensurePartitions(database.db, later)).toBe(0);
    expect(await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, later)).toEqual([]);
  });
});
