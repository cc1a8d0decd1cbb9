/**
 * Profiling aid for the job fan-out (issue 14), not a bench case: seeds N
 * configured devices (the bench fleet: 4 tunnels each, desired configs
 * compiled) into an in-memory PGlite, or into PostgreSQL when PG_URL names an
 * empty scratch database, then installs a multi-link policy on every device
 * with the service the route calls (`installMlPolicy`) in this process and
 * prints its time and the statements that took longest (Kysely's query log,
 * summed by statement), then the recompile a server runs after answering
 * (`recompileStale`, timed and summed the same way). Nothing is connected.
 *
 *   npx tsx test-harness/src/bench/fanout-profile.ts 2000
 *   PG_URL=postgres://postgres@127.0.0.1:55433/scratch npx tsx test-harness/src/bench/fanout-profile.ts 10000
 *   node --cpu-prof --import tsx test-harness/src/bench/fanout-profile.ts 2000
 */
import { randomBytes } from "node:crypto";
import { MlPolicyCreate, PathLabelCreate } from "@tern/protocol";
import pino from "pino";
import { loadConfig } from "../../../apps/server/src/config.ts";
import { createKeyring } from "../../../apps/server/src/secrets/keyring.ts";
import { systemCtx } from "../../../apps/server/src/services/context.ts";
import { recompileStale } from "../../../apps/server/src/services/fanout/recompile.ts";
import { createMlPolicy } from "../../../apps/server/src/services/mlpolicies.ts";
import { installMlPolicy } from "../../../apps/server/src/services/mlpolicy-install.ts";
import { createPathLabel } from "../../../apps/server/src/services/path-labels.ts";
import { profileDb } from "./profile-db.ts";
import { seedFleet } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 10000);
const profile = await profileDb();
const { db } = profile;
const secretKey = randomBytes(32).toString("base64");
await seedFleet(profile.handle, {
  devices: n,
  tokenSecret: "profile",
  secretKey,
  configure: true,
  finishedJobs: false,
});
const org = await db.selectFrom("organizations").select(["id", "account_id"]).executeTakeFirstOrThrow();
const deps = {
  db,
  config: loadConfig({}),
  keyring: createKeyring(Buffer.from(secretKey, "base64")),
  logger: pino({ level: "silent" }),
};
const ctx = systemCtx(deps as never, { id: org.id, accountId: org.account_id } as never);
// As the bench's fan-out does through the API: a path label and a policy with one link-quality rule.
const label = await createPathLabel(ctx, PathLabelCreate.parse({ name: "bench-internet", type: "DIA" }));
const policy = await createMlPolicy(
  ctx,
  MlPolicyCreate.parse({
    name: "bench-policy",
    rules: [
      {
        name: "voice",
        priority: 1,
        match: { protocol: "udp", ports: "5060-5061" },
        action: { order: "link-quality", pathlabels: [label.id] },
      },
    ],
  }),
);
profile.timing = true;
const t0 = performance.now();
const result = await installMlPolicy(ctx, policy.id, { filter: [] } as never);
console.log(`install: ${result.jobIds.length} jobs for ${result.changed} devices in ${(performance.now() - t0).toFixed(0)} ms`);
printStatements();
// What a server's recompiler does after the answer (services/fanout): compile, seal and store every marked device.
const t1 = performance.now();
const compiled = await recompileStale(deps as never);
console.log(`recompile: ${compiled} devices in ${(performance.now() - t1).toFixed(0)} ms`);
printStatements();
await db.destroy();

/** The statements since the last call, longest first (summed by statement text). */
function printStatements(): void {
  profile.printStatements();
  profile.statements({ clear: true });
}
