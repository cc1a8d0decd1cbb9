/**
 * Migration 20261207-301: tunnel samples in daily partitions, dropped whole
 * once expired by the partition duty (no DELETE whose look for expired rows
 * reads the table). A new database gets them empty; an existing table becomes
 * one partition of everything before the end of its newest sample's day,
 * every sample kept, dropped whole once that end has expired; down gives one
 * plain table back with every sample.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import * as migration from "../../src/db/migrations/20261207-301-sample-partitions.ts";
import { dropExpiredPartitions, ensurePartitions, listPartitions } from "../../src/services/statistics/partitions.ts";
import { DAY_MS } from "../../src/services/statistics/settings.ts";
import { TEST_STATISTICS_SETTINGS } from "../support/statistics-settings.ts";
import { openTestDatabase } from "../support/test-database.ts";

/** Each describe's own new database: the migration's cases leave an old table's partition behind. */
let database: DatabaseHandle;
function useDatabase(): void {
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database?.close());
}

const stamp = (t: number) => new Date(t).toISOString().replace(/[-T:]/g, "").slice(0, 10);
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
const RETENTION = TEST_STATISTICS_SETTINGS.tunnelRawRetentionMs;

async function insertAt(tunnelId: string, times: number[]): Promise<void> {
  await database.db
    .insertInto("tunnel_samples")
    .values(
      times.map((t) => ({
        tunnel_id: tunnelId,
        device_id: tunnelId,
        side: "a" as const,
        at: new Date(t),
        up: true,
        loss: 0,
        rtt: t % 1000,
        jitter: 0,
        samples: 1,
      })),
    )
    .execute();
}

/** Each sample of the tunnel: its time and the partition that holds it. */
async function samplesOf(tunnelId: string): Promise<{ at: number; partition: string }[]> {
  const { rows } = await sql<{ at: Date; partition: string }>`select at, tableoid::regclass::text as partition
    from tunnel_samples where tunnel_id = ${tunnelId}::uuid order by at`.execute(database.db);
  return rows.map((r) => ({ at: new Date(r.at).getTime(), partition: r.partition }));
}

const relkind = async (name: string) =>
  (await sql<{ kind: string }>`select relkind as kind from pg_class where relname = ${name}`.execute(database.db)).rows[0]?.kind;

describe("migration 20261207-301: tunnel samples in daily partitions", () => {
  useDatabase();

  it("gives a new database the table partitioned, a partition a day from today to two days ahead", async () => {
    expect(await relkind("tunnel_samples")).toBe("p");
    const partitions = await listPartitions(database.db, "tunnel_samples");
    expect(partitions[0]).toMatchObject({ name: `tunnel_samples_p${stamp(today)}`, start: today, end: today + DAY_MS });
    expect(partitions.every((p) => p.end - p.start === DAY_MS)).toBe(true);
    expect(partitions.at(-1)!.end).toBeGreaterThanOrEqual(Date.now() + 2 * DAY_MS);
  });

  it("keeps an existing table's samples as one partition of everything before tomorrow, dropped whole once expired", async () => {
    const tunnel = randomUUID();
    const now = Date.now();
    await migration.down(database.db as never);
    expect(await relkind("tunnel_samples")).toBe("r");
    const times = [now - 9 * DAY_MS, now - 8 * DAY_MS, now - 3_600_000, now];
    await insertAt(tunnel, times);

    await migration.up(database.db as never);
    const tomorrow = today + DAY_MS;
    const old = `tunnel_samples_before_p${stamp(tomorrow)}`;
    expect(await samplesOf(tunnel)).toEqual(times.map((at) => ({ at, partition: old })));
    const partitions = await listPartitions(database.db, "tunnel_samples");
    expect(partitions[0]).toEqual({ name: old, start: Number.NEGATIVE_INFINITY, end: tomorrow });
    expect(partitions[1]).toMatchObject({ name: `tunnel_samples_p${stamp(tomorrow)}`, start: tomorrow });
    // Its two indexes were attached to the partitioned table's, not built again beside them.
    const indexes = await sql<{ name: string; parent: string }>`select c.relname as name, p.relname as parent
      from pg_index i join pg_class c on c.oid = i.indexrelid
      join pg_inherits h on h.inhrelid = c.oid join pg_class p on p.oid = h.inhparent
      where i.indrelid = ${old}::regclass order by 1`.execute(database.db);
    expect(indexes.rows).toEqual([
      { name: `${old}_at_brin`, parent: "tunnel_samples_at_brin" },
      { name: `${old}_tunnel_at_idx`, parent: "tunnel_samples_tunnel_at_idx" },
    ]);

    // New samples land today in the old table, from tomorrow in the days' partitions; nothing overlaps it.
    await insertAt(tunnel, [tomorrow + 3_600_000]);
    expect((await samplesOf(tunnel)).at(-1)).toEqual({
      at: tomorrow + 3_600_000,
      partition: `tunnel_samples_p${stamp(tomorrow)}`,
    });
    expect(await ensurePartitions(database.db, now, now - 10 * DAY_MS, ["tunnel_samples"])).toBe(0);

    // Dropped whole once its end is older than the retention, not before.
    expect(await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, now)).not.toContain(old);
    expect(await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, tomorrow + RETENTION - 1)).not.toContain(old);
    expect(await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, tomorrow + RETENTION)).toContain(old);
    expect(await samplesOf(tunnel)).toEqual([{ at: tomorrow + 3_600_000, partition: `tunnel_samples_p${stamp(tomorrow)}` }]);
    await ensurePartitions(database.db);
  });

  it("bounds the old table after its newest sample when a clock put one days ahead", async () => {
    const tunnel = randomUUID();
    await migration.down(database.db as never);
    const ahead = Date.now() + 3 * DAY_MS;
    await insertAt(tunnel, [Date.now(), ahead]);
    await migration.up(database.db as never);
    const end = Math.floor(ahead / DAY_MS) * DAY_MS + DAY_MS;
    const partitions = await listPartitions(database.db, "tunnel_samples");
    expect(partitions[0]).toEqual({ name: `tunnel_samples_before_p${stamp(end)}`, start: Number.NEGATIVE_INFINITY, end });
    expect((await samplesOf(tunnel)).map((s) => s.at)).toEqual([expect.any(Number), ahead]);
    // It holds every day up to two days ahead; the duty makes the days after it as they come.
    expect(partitions).toHaveLength(1);
    const later = end - 2 * DAY_MS + 1;
    expect(await ensurePartitions(database.db, later, later, ["tunnel_samples"])).toBe(1);
  });

  it("down gives one plain table back with every sample", async () => {
    const tunnel = randomUUID();
    await ensurePartitions(database.db, Date.now(), Date.now() - 2 * DAY_MS, ["tunnel_samples"]);
    const times = [Date.now() - 2 * DAY_MS, Date.now()];
    await insertAt(tunnel, times);
    await migration.down(database.db as never);
    expect(await relkind("tunnel_samples")).toBe("r");
    expect((await samplesOf(tunnel)).map((s) => s.at)).toEqual(times);
    await migration.up(database.db as never);
    expect((await samplesOf(tunnel)).map((s) => s.at)).toEqual(times);
  });
});

describe("the samples' retention", () => {
  useDatabase();

  it("drops expired days whole, keeping the days still inside the retention", async () => {
    const tunnel = randomUUID();
    const now = Date.now();
    await ensurePartitions(database.db, now, now - 10 * DAY_MS, ["tunnel_samples"]);
    const old = now - RETENTION - 1.5 * DAY_MS;
    const kept = [now - RETENTION + 3_600_000, now];
    await insertAt(tunnel, [old, ...kept]);
    const dropped = await dropExpiredPartitions(database.db, TEST_STATISTICS_SETTINGS, now);
    const day = `tunnel_samples_p${stamp(Math.floor(old / DAY_MS) * DAY_MS)}`;
    expect(dropped).toContain(day);
    expect(await relkind(day)).toBeUndefined();
    expect((await samplesOf(tunnel)).map((s) => s.at)).toEqual(kept);
    // Every partition left ends after the cutoff.
    for (const p of await listPartitions(database.db, "tunnel_samples")) expect(p.end).toBeGreaterThan(now - RETENTION);
  });
});
