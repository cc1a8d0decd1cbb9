import { randomBytes } from "node:crypto";
import pino from "pino";
import { loadConfig } from "../../../apps/server/src/config.ts";
import { startServer } from "../../../apps/server/src/server.ts";
import { ADMIN_EMAIL, ADMIN_PASSWORD } from "./server/seed.ts";
import pg from "pg";
const url = process.env.PG_URL!;
const n = Number(process.argv[2] ?? 100);
const c = new pg.Client({ connectionString: url }); await c.connect();
const ids = (await c.query("select id from devices where not is_approved order by id limit $1", [n])).rows.map((r) => r.id);
await c.end();
const server = await startServer(loadConfig({ PORT: process.env.REAL ? "18080" : "0", DATABASE_URL: url, TERN_SECRET_KEY: process.env.TERN_SECRET_KEY ?? randomBytes(32).toString("base64"), TERN_LOG_LEVEL: "silent", TERN_API_RATE_TOKEN: "100000000", TERN_API_RATE_ADDRESS: "100000000" }), pino({ level: "silent" }));
const f = (req: Request) => process.env.REAL ? fetch(req.url.replace("http://x", "http://127.0.0.1:18080"), req) : server.app.fetch(req);
const login = await f(new Request("http://x/api/users/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }) }));
const { accessToken } = (await login.json()) as { accessToken: string };
const ms: number[] = [];
const warm = Number(process.env.WARM ?? 20);
for (const id of ids.splice(0, warm)) {
  const res = await f(new Request(`http://x/api/devices/${id}`, { method: "PUT", headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" }, body: JSON.stringify({ isApproved: true }) }));
  await res.arrayBuffer();
}
const cpu0 = process.cpuUsage(); const w0 = performance.now();
for (const id of ids) {
  const t0 = performance.now();
  const res = await f(new Request(`http://x/api/devices/${id}`, { method: "PUT", headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" }, body: JSON.stringify({ isApproved: true }) }));
  await res.arrayBuffer();
  if (res.status !== 202) throw new Error(String(res.status));
  ms.push(performance.now() - t0);
}
const cpu = process.cpuUsage(cpu0); console.log("cpu ms/req", ((cpu.user + cpu.system) / 1000 / ids.length).toFixed(2), "wall ms/req", ((performance.now() - w0) / ids.length).toFixed(2));
const sorted = [...ms].sort((a, b) => a - b);
console.log("p50", sorted[Math.floor(sorted.length / 2)]!.toFixed(2), "p90", sorted[Math.floor(sorted.length * 0.9)]!.toFixed(2), "max", sorted.at(-1)!.toFixed(1));
await server.close();
