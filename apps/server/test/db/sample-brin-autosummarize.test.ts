/**
 * Migration 20261207-201: the samples' BRIN index on `at` is set to summarize
 * each filled page range (autovacuum does it on PostgreSQL, the embedded
 * maintenance on PGlite: `summarizeNewRanges`), and so is each daily
 * partition's since the table was partitioned (20261207-301). A range without
 * a summary matches every query, so a look at a minute of samples (the minute
 * roll-up's) read every page of the day written since the partition's last
 * VACUUM; summarized, it reads the index and the last, unfilled range only.
 * Checked by the pages the look reads (its plan's heap blocks), not by time.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { summarizeNewRanges } from "../../src/db/embedded-vacuum.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261207-201: the samples' BRIN indexes summarize themselves", () => {
  const t = useTestServer();

  /**
   * The heap pages a look at a minute with no samples yet visits through the BRIN index of today's partition (its
   * plan's heap blocks).
   */
  async function pagesRead(): Promise<number> {
    const { rows } = await sql<{ "QUERY PLAN": string }>`explain (analyze, costs off, timing off)
      select count(*) from tunnel_samples
      where at >= date_trunc('day', now(), 'UTC') + interval '3 hours'
        and at < date_trunc('day', now(), 'UTC') + interval '3 hours 1 minute'`.execute(t.database.db);
    const text = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toMatch(/Bitmap Index Scan on tunnel_samples_p\d{10}_at_idx/);
    // "Heap Blocks: lossy=N" (and exact=M): the pages of the ranges the index could not rule out.
    return [...text.matchAll(/(?:lossy|exact)=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  }

  it("is set to autosummarize, on the partitioned table and each of its partitions", async () => {
    const { rows } = await sql<{ name: string; options: string[] | null }>`select relname as name, reloptions as options
      from pg_class where relname = 'tunnel_samples_at_brin' or relname ~ '^tunnel_samples_p[0-9]{10}_at_idx$'`.execute(
      t.database.db,
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const r of rows) expect(r.options, r.name).toContain("autosummarize=on");
  });

  it("rules out the filled ranges of recent samples once they are summarized", async () => {
    const deviceId = randomUUID();
    // About forty ranges of samples (128 pages a range) of 30,000 tunnels, as a fleet writes them (a second's
    // samples together), in today's partition from 01:00 UTC, none in the minute looked at.
    await sql`insert into tunnel_samples (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples)
      select md5((g % 30000)::text)::uuid, ${deviceId}::uuid, 'a',
        date_trunc('day', now(), 'UTC') + interval '1 hour' + (g / 30000) * interval '1 s',
        true, 0, 1, 0, 1
      from generate_series(1, 300000) g`.execute(t.database.db);
    await sql`analyze tunnel_samples`.execute(t.database.db);
    const unsummarized = await pagesRead();
    expect(unsummarized).toBeGreaterThan(1000);

    expect(await summarizeNewRanges(t.database.db)).toBeGreaterThan(10);
    const summarized = await pagesRead();
    // The last range, still filling, is the most it reads.
    expect(summarized).toBeLessThanOrEqual(128);
    // Nothing was left to summarize.
    expect(await summarizeNewRanges(t.database.db)).toBe(0);
  });
});
