/**
 * What the gateway keeps only for a while besides the samples: routed replies
 * (five minutes) and the latest figures of deleted tunnels (`deleteLatestOfDeletedTunnels`, once a minute). The
 * tunnel samples are kept in daily partitions dropped whole once expired, by the partition duty
 * (services/statistics/partitions.ts; migration 20261207-301).
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";

/** Routed replies nobody read within five minutes (their asker gave up long before). */
export async function deleteStaleReplies(db: Db): Promise<number> {
  const result = await sql`delete from gateway_replies where created_at < now() - interval '5 minutes'`.execute(db);
  return Number(result.numAffectedRows ?? 0);
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
