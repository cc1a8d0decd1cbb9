/**
 * Migration 20261207-201: the samples' BRIN index on `at` is set to summarize
 * each filled page range (autovacuum does it on PostgreSQL, the embedded
 * maintenance on PGlite: `summarizeNewRanges`). A range without a summary
 * matches every query, so the retention duty's look for expired samples read
 * every page written since the table's last VACUUM; summarized, it reads the
 * index and the last, unfilled range only. Checked by the pages the look
 * reads (its plan's heap blocks), not by time.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { summarizeNewRanges } from "../../src/db/embedded-vacuum.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261207-201: the samples' BRIN index summarizes itself", () => {
  const t = useTestServer();

  /** The heap pages the retention's look for expired samples visits through the BRIN index (its plan's heap blocks). */
  async function pagesRead(): Promise<number> {
    const { rows } = await sql<{ "QUERY PLAN": string }>`explain (analyze, costs off, timing off)
      select ctid from tunnel_samples where at < now() - interval '7 days' limit 10000`.execute(t.database.db);
    const text = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toContain("tunnel_samples_at_brin");
    // "Heap Blocks: lossy=N" (and exact=M): the pages of the ranges the index could not rule out.
    return [...text.matchAll(/(?:lossy|exact)=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  }

  it("is set to autosummarize", async () => {
    const { rows } = await sql<{ options: string[] | null }>`select reloptions as options from pg_class
      where relname = 'tunnel_samples_at_brin'`.execute(t.database.db);
    expect(rows[0]!.options).toContain("autosummarize=on");
  });

  it("rules out the filled ranges of recent samples once they are summarized", async () => {
    const deviceId = randomUUID();
    // About forty ranges of recent samples (128 pages a range) of 30,000 tunnels, as a fleet writes them (a
    // second's samples together), none expired.
    await sql`insert into tunnel_samples (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples)
      select md5((g % 30000)::text)::uuid, ${deviceId}::uuid, 'a', now() - interval '1 hour' + (g / 30000) * interval '1 s',
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
