/**
 * Profiling aid for one approval (issue 14, `PUT /devices/{id} {isApproved}`),
 * not a bench case: seeds N pending devices (the bench fleet: 4 tunnels each)
 * into an in-memory PGlite, or PostgreSQL when PG_URL names an empty scratch
 * database, then approves `singles` devices one at a time through the
 * service in this process and prints p50/max per approval and the statements
 * each approval ran (Kysely's query log, by statement).
 *
 *   npx tsx test-harness/src/bench/approve-single-profile.ts 10000 20
 *
 * On PostgreSQL the pool is the server's own (db/database.ts postgresPool); with PREPARED=1 its connections
 * keep statements prepared with generic plans, as TERN_DB_PREPARED_STATEMENTS sets them up.
 */
import { randomBytes } from "node:crypto";
import pino from "pino";
import { loadConfig } from "../../../apps/server/src/config.ts";
import { postgresPool } from "../../../apps/server/src/db/database.ts";
import { createKeyring } from "../../../apps/server/src/secrets/keyring.ts";
import { systemCtx } from "../../../apps/server/src/services/context.ts";
import { updateDevice } from "../../../apps/server/src/services/devices/update.ts";
import { profileDb } from "./profile-db.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 10000);
const singles = Number(process.argv[3] ?? 20);
const profile = await profileDb({ pool: (url) => postgresPool(url, 10, process.env.PREPARED ? 100 : 0) });
const { db } = profile;
const secretKey = process.env.TERN_SECRET_KEY ?? randomBytes(32).toString("base64");
await seedFleet(profile.handle, {
  devices: n,
  tokenSecret: "profile",
  secretKey,
  configure: false,
  finishedJobs: false,
  pending: n,
});
const org = await db.selectFrom("organizations").select(["id", "account_id", "name"]).executeTakeFirstOrThrow();
const ids = (
  await db
    .selectFrom("devices")
    .select("id")
    .orderBy("id")
    .limit(singles + 1)
    .execute()
).map((r) => r.id);
const deps = {
  db,
  config: loadConfig({}),
  keyring: createKeyring(Buffer.from(secretKey, "base64")),
  logger: pino({ level: "silent" }),
};
const ctx = systemCtx(deps as never, { id: org.id, accountId: org.account_id, name: org.name } as never);
// Warm-up (lazily compiled code, plans) on the first id.
await updateDevice(ctx, { id: ids[0]!, body: { isApproved: true } as never });
profile.timing = true;
const ms: number[] = [];
for (const id of ids.slice(1)) {
  const t0 = performance.now();
  await updateDevice(ctx, { id, body: { isApproved: true } as never });
  ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
const statements = profile.statements();
const total = statements.reduce((s, t) => s + t.n, 0);
console.log(
  `${singles} approvals at ${n} devices: p50 ${ms[Math.floor(ms.length / 2)]!.toFixed(1)} ms, max ${ms.at(-1)!.toFixed(1)} ms, ${(total / singles).toFixed(1)} statements each`,
);
for (const t of statements) console.log((t.ms / singles).toFixed(2).padStart(7), (t.n / singles).toFixed(1).padStart(5), t.text);
await db.destroy();
