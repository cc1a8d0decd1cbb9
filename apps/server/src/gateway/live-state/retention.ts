/**
 * Retention of tunnel samples: rows older than the retention are deleted in
 * chunks (each a small statement found through the BRIN index on `at`), up to
 * a time budget per run, so a large backlog is worked off over several runs
 * instead of one long delete. Stale routed replies go too. The latest values
 * of deleted tunnels go in a sweep of their own, once a minute
 * (`deleteLatestOfDeletedTunnels`).
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";

export interface RetentionOptions {
  retentionMs: number;
  chunkRows?: number;
  budgetMs?: number;
}

export async function deleteExpiredSamples(db: Db, options: RetentionOptions): Promise<{ deleted: number; chunks: number }> {
  const chunk = options.chunkRows ?? 10_000;
  const budget = options.budgetMs ?? 2_000;
  const started = performance.now();
  let deleted = 0;
  let chunks = 0;
  const cutoff = `${Math.round(options.retentionMs)} milliseconds`;
  for (;;) {
    const result = await sql`delete from tunnel_samples where ctid = any(array(
        select ctid from tunnel_samples where at < now() - ${cutoff}::interval limit ${chunk}))`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    chunks++;
    if (n < chunk || performance.now() - started > budget) break;
  }
  await sql`delete from gateway_replies where created_at < now() - interval '5 minutes'`.execute(db);
  return { deleted, chunks };
}

/**
 * The latest figures of tunnels deleted since: no foreign key ties them to `tunnels` (its check would cost every
 * row the status writer writes), so a tunnel's delete leaves them. Every reader joins them from `tunnels`, so until
 * then they are only room. It reads every row of the table (40,000 rows, 39 ms of PostgreSQL's time at 10,000
 * devices), so it runs once a minute, not every duty interval with the samples' retention.
 */
export async function deleteLatestOfDeletedTunnels(db: Db): Promise<number> {
  const result =
    await sql`delete from tunnel_latest l where not exists (select 1 from tunnels t where t.id = l.tunnel_id)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
