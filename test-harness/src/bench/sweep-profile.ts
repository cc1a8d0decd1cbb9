/**
 * Profiling aid for the pending-tunnel sweep (notify/checks.ts), not a bench case: seeds N devices (the bench
 * fleet: 4 tunnels each, no device ever connected, so every tunnel is pending) into an in-memory PGlite, or
 * PostgreSQL when PG_URL names an empty scratch database, then runs two whole sweeps in slices as the duty does
 * and prints each sweep's time, the slowest slices and the statements that took longest.
 *
 *   npx tsx test-harness/src/bench/sweep-profile.ts 10000
 */
import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { createPGlitePool } from "../../../apps/server/src/db/pglite-pool.ts";
import type { Database } from "../../../apps/server/src/db/schema.ts";
import { checkPendingTunnels, PENDING_TUNNELS_PER_RUN, type TunnelSweep } from "../../../apps/server/src/notify/checks.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 10000);
const url = process.env.PG_URL;
const pglite = url ? undefined : await PGlite.create();
const times = new Map<string, { n: number; ms: number }>();
let logging = false;
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool: url ? new pg.Pool({ connectionString: url, max: 4 }) : createPGlitePool(pglite!) }),
  log(e) {
    if (!logging) return;
    const key = e.query.sql.replace(/\s+/g, " ").slice(0, 100);
    const t = times.get(key) ?? { n: 0, ms: 0 };
    t.n++;
    t.ms += e.queryDurationMillis;
    times.set(key, t);
  },
});
await seedFleet({ db, kind: url ? "postgres" : "pglite", pglite, close: async () => {} } as never, {
  devices: n,
  tokenSecret: "profile",
  secretKey: randomBytes(32).toString("base64"),
  configure: true,
  finishedJobs: true,
});
const notifier = { raise: async () => null, resolve: async () => null } as never;
logging = true;
for (let sweep = 1; sweep <= 2; sweep++) {
  const slices: number[] = [];
  let from: TunnelSweep | null = null;
  const t0 = performance.now();
  do {
    const s0 = performance.now();
    const result: { next: TunnelSweep | null } = await db
      .transaction()
      .execute((trx) => checkPendingTunnels(trx, notifier, 60_000, PENDING_TUNNELS_PER_RUN, from));
    slices.push(performance.now() - s0);
    from = result.next;
  } while (from);
  slices.sort((a, b) => a - b);
  const q = (p: number) => slices[Math.min(slices.length - 1, Math.floor(p * slices.length))]!.toFixed(1);
  console.log(
    `sweep ${sweep}: ${(performance.now() - t0).toFixed(0)} ms, ${slices.length} slices, p50 ${q(0.5)} p99 ${q(0.99)} max ${q(1)} ms`,
  );
}
for (const [text, t] of [...times].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8))
  console.log(t.ms.toFixed(0).padStart(7), String(t.n).padStart(5), text);
await db.destroy();
