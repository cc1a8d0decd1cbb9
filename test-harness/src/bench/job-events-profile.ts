/**
 * Profiling aid for the jobs' console live events (issue 14), not a bench
 * case: seeds N devices into an in-memory PGlite, or into PostgreSQL when
 * PG_URL names an empty scratch database, inserts one job per device in one
 * statement (as a fan-out does), then moves them to `running` and to
 * `complete` BATCH per transaction (as the dispatch and result group commits
 * do), and prints each phase's time and the `live_events` rows written. Run
 * it in a copy of an older tree to compare trigger designs.
 *
 *   npx tsx test-harness/src/bench/job-events-profile.ts 2000 50
 *   PG_URL=postgres://postgres@127.0.0.1:55433/scratch npx tsx test-harness/src/bench/job-events-profile.ts 2000 50
 */
import { randomBytes, randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { pglitePool } from "../../../apps/server/src/db/pglite-pool.ts";
import type { Database } from "../../../apps/server/src/db/schema.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 2000);
const batch = Number(process.argv[3] ?? 50);
const url = process.env.PG_URL;
const pglite = url ? undefined : await PGlite.create();
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool: url ? new pg.Pool({ connectionString: url, max: 4 }) : pglitePool(pglite!) }),
});
await seedFleet({ db, kind: url ? "postgres" : "pglite", pglite, close: async () => {} } as never, {
  devices: n,
  tokenSecret: "profile",
  secretKey: randomBytes(32).toString("base64"),
  configure: false,
  finishedJobs: false,
});
const org = await db.selectFrom("organizations").select("id").executeTakeFirstOrThrow();
const devices = (await db.selectFrom("devices").select("id").orderBy("id").execute()).map((d) => d.id);
const ids = devices.map(() => randomUUID());
const events = async () => Number((await sql<{ c: number }>`select count(*)::int as c from live_events`.execute(db)).rows[0]!.c);
const before = await events();

const t0 = performance.now();
await sql`insert into jobs (id, organization_id, device_id, type, state, tasks, target_hash, created_by)
  select u.id, ${org.id}::uuid, u.d, 'mlpolicy', 'queued', '[]'::jsonb, 'h', 'profile'
  from unnest(${ids}::uuid[], ${devices}::uuid[]) as u(id, d)`.execute(db);
const insertMs = performance.now() - t0;
async function move(state: "running" | "complete"): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i += batch)
    await db
      .transaction()
      .execute((trx) =>
        sql`update jobs set state = ${state}, started_at = coalesce(started_at, now()) where id = any(${ids.slice(i, i + batch)}::uuid[])`.execute(
          trx,
        ),
      );
  return performance.now() - t;
}
const runningMs = await move("running");
const completeMs = await move("complete");
const liveEvents = (await events()) - before;
console.log(JSON.stringify({ n, batch, db: url ? "postgres" : "pglite", insertMs, runningMs, completeMs, liveEvents }));
await db.destroy();
