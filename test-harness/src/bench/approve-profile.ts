/**
 * Profiling aid for the bulk approval (issue 14), not a bench case: seeds N
 * pending devices (the bench fleet: 4 tunnels each) into an in-memory PGlite,
 * or into PostgreSQL when PG_URL names an empty scratch database, then runs
 * the bulk approval service in this process and prints its time and the
 * statements that took longest (Kysely's query log, summed by statement).
 *
 *   npx tsx test-harness/src/bench/approve-profile.ts 2000
 *   PG_URL=postgres://postgres@127.0.0.1:55432/scratch npx tsx test-harness/src/bench/approve-profile.ts 10000
 *   node --cpu-prof --import tsx test-harness/src/bench/approve-profile.ts 2000
 *
 * PGLITE_DIR names an empty directory for a PGlite on files, as the server's embedded default keeps it
 * (in memory otherwise); PGLITE_SETTINGS adds `-c` settings to it, comma-separated (`full_page_writes=off`).
 */
import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import pino from "pino";
import { loadConfig } from "../../../apps/server/src/config.ts";
import { createKeyring } from "../../../apps/server/src/secrets/keyring.ts";
import { systemCtx } from "../../../apps/server/src/services/context.ts";
import { approveDevices } from "../../../apps/server/src/services/devices/approval/approve-many.ts";
import { profileDb } from "./profile-db.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 10000);
const settings = (process.env.PGLITE_SETTINGS ?? "").split(",").filter(Boolean);
const profile = await profileDb({
  pglite: {
    dataDir: process.env.PGLITE_DIR,
    startParams: [...PGlite.defaultStartParams, ...settings.flatMap((s) => ["-c", s])],
  },
});
const { db } = profile;
const secretKey = randomBytes(32).toString("base64");
await seedFleet(profile.handle, {
  devices: n,
  tokenSecret: "profile",
  secretKey,
  configure: false,
  finishedJobs: false,
  pending: n,
});
const org = await db.selectFrom("organizations").select(["id", "account_id"]).executeTakeFirstOrThrow();
const deps = {
  db,
  config: loadConfig({}),
  keyring: createKeyring(Buffer.from(secretKey, "base64")),
  logger: pino({ level: "silent" }),
};
const ctx = systemCtx(deps as never, { id: org.id, accountId: org.account_id } as never);
profile.timing = true;
const t0 = performance.now();
const result = await approveDevices(ctx, { filter: [{ key: "isApproved", op: "==", val: false }] } as never);
console.log(`approved ${result.approved} refused ${result.refused} in ${(performance.now() - t0).toFixed(0)} ms`);
profile.printStatements();
await db.destroy();
