/**
 * Profiling aid for the list endpoints (issue 14), not a bench case: starts
 * Tern's server in this process on a database the bench seeded (PG_URL, with
 * the bench admin; e.g. the scratch database of fanout-profile.ts), then
 * sends each endpoint of the server-api case N times, one at a time, through
 * the app's own `fetch` (no socket), and prints the server's CPU per request
 * (process.cpuUsage, this process only) and the answer's size.
 *
 *   PG_URL=postgres://postgres@127.0.0.1:55433/scratch npx tsx test-harness/src/bench/list-profile.ts 300
 *   PG_URL=… node --cpu-prof --import tsx test-harness/src/bench/list-profile.ts 300
 *   PATHS='/api/jobs?limit=1' PG_URL=… npx tsx test-harness/src/bench/list-profile.ts 5000   (other paths: the per-request cost)
 */
import { randomBytes } from "node:crypto";
import pino from "pino";
import { loadConfig } from "../../../apps/server/src/config.ts";
import { startServer } from "../../../apps/server/src/server.ts";
import { API_ENDPOINTS } from "./cases/server-api.ts";
import { ADMIN_EMAIL, ADMIN_PASSWORD } from "./server/seed.ts";

const n = Number(process.argv[2] ?? 200);
const url = process.env.PG_URL;
if (!url) throw new Error("PG_URL names a database the bench seeded");
const server = await startServer(
  loadConfig({
    PORT: "0",
    DATABASE_URL: url,
    TERN_SECRET_KEY: process.env.TERN_SECRET_KEY ?? randomBytes(32).toString("base64"),
    TERN_LOG_LEVEL: "silent",
    TERN_API_RATE_TOKEN: "100000000",
    TERN_API_RATE_ADDRESS: "100000000",
  }),
  pino({ level: "silent" }),
);
const login = await server.app.fetch(
  new Request("http://x/api/users/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  }),
);
const { accessToken } = (await login.json()) as { accessToken: string };
const paths = (process.env.PATHS ? process.env.PATHS.split(" ") : API_ENDPOINTS.map((e) => e.path)).filter((p) =>
  p.includes(process.env.ONLY ?? ""),
);
for (const path of paths) {
  const get = async () => {
    const res = await server.app.fetch(new Request(`http://x${path}`, { headers: { authorization: `Bearer ${accessToken}` } }));
    return (await res.arrayBuffer()).byteLength;
  };
  let bytes = 0;
  for (let i = 0; i < 20; i++) bytes = await get();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await get();
  const cpu = process.cpuUsage(cpu0);
  const ms = performance.now() - t0;
  console.log(
    `${path.slice(0, 60).padEnd(60)} ${(bytes / 1024).toFixed(1).padStart(6)} KB  cpu ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms/req  wall ${(ms / n).toFixed(2)} ms/req`,
  );
}
await server.close();
