/**
 * Profiling aid for the pending-tunnel sweep (notify/checks.ts), not a bench case: seeds N devices (the bench
 * fleet: 4 tunnels each, no device ever connected, so every tunnel is pending) into an in-memory PGlite, or
 * PostgreSQL when PG_URL names an empty scratch database, then runs two whole sweeps in slices as the duty does
 * and prints each sweep's time, the slowest slices and the statements that took longest.
 *
 *   npx tsx test-harness/src/bench/sweep-profile.ts 10000
 *
 * PGLITE_DIR names an empty directory for a PGlite on files, as the server's embedded default keeps it.
 */
import { randomBytes } from "node:crypto";
import { checkPendingTunnels, PENDING_TUNNELS_PER_RUN, type TunnelSweep } from "../../../apps/server/src/notify/checks.ts";
import { profileDb } from "./profile-db.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 10000);
const profile = await profileDb({ pglite: { dataDir: process.env.PGLITE_DIR } });
const { db } = profile;
await seedFleet(profile.handle, {
  devices: n,
  tokenSecret: "profile",
  secretKey: randomBytes(32).toString("base64"),
  configure: true,
  finishedJobs: true,
});
const notifier = { raise: async () => null, resolve: async () => null } as never;
profile.timing = true;
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
profile.printStatements(8);
await db.destroy();
