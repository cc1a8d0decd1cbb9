/**
 * The management server as a lab process: what `npm start` runs
 * (`tsx apps/server/src/main.ts`), in the root namespace, listening on a
 * loopback port, on its embedded database in the lab directory unless
 * DATABASE_URL is given. Its environment (docs/server.md):
 * PORT, HOST=127.0.0.1, TERN_DATA_DIR, DATABASE_URL, TERN_LOG_LEVEL, and
 * TERN_ADMIN_EMAIL / TERN_ADMIN_PASSWORD, which create the first
 * administrator on an empty database (the lab drives the API as that admin).
 * TERN_WEBHOOK_ALLOWED_NETWORKS=127.0.0.1: the scenarios' webhook receiver
 * listens on this host's loopback, which webhooks may not reach by default.
 * Ready when `GET /api/health` answers 200 (the API and the database answer).
 */
import { createServer } from "node:net";
import { join } from "node:path";
import type { ProcessSpec } from "../supervisor.ts";

export const READY_PATH = "/api/health";
export const SERVER_KEY = "control:server";

export interface ServerOptions {
  repoRoot: string;
  labDir: string;
  port: number;
  /** postgres://… to use a PostgreSQL server; the embedded database otherwise. */
  databaseUrl?: string;
  admin: { email: string; password: string };
  logLevel?: string;
  /** More of the server's settings (docs/server.md), e.g. `TERN_PROBE_INTERVAL_MS`; the lab's own above win. */
  env?: Record<string, string>;
}

export function serverSpec(o: ServerOptions): ProcessSpec {
  const env: Record<string, string> = {
    ...o.env,
    PORT: String(o.port),
    HOST: "127.0.0.1",
    TERN_DATA_DIR: join(o.labDir, "server-data"),
    TERN_LOG_LEVEL: o.logLevel ?? "info",
    TERN_ADMIN_EMAIL: o.admin.email,
    TERN_ADMIN_PASSWORD: o.admin.password,
    TERN_WEBHOOK_ALLOWED_NETWORKS: "127.0.0.1",
    // Scenarios drive the API from one address and token, faster than a person would.
    TERN_API_RATE_TOKEN: "1000000",
    TERN_API_RATE_ADDRESS: "1000000",
  };
  if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
  return {
    key: SERVER_KEY,
    role: "server",
    // One process (no tsx wrapper in between): the recorded pid is the server's, and SIGTERM reaches it directly.
    argv: [process.execPath, "--import", "tsx", join(o.repoRoot, "apps", "server", "src", "main.ts")],
    env,
    cwd: o.repoRoot,
    log: join(o.labDir, "server.log"),
  };
}

/** Ports the agent listens on inside each edge (metrics, troubleshooting page): the relay must not take them. */
const AGENT_PORTS = new Set([9464, 8088]);

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released), never one the agents use. */
export async function freeLoopbackPort(): Promise<number> {
  for (;;) {
    const port = await kernelPort();
    if (!AGENT_PORTS.has(port)) return port;
  }
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** Polls `url` until it answers 2xx; throws after timeoutMs with the last failure. */
export async function waitForHttp(url: string, timeoutMs = 30_000, isAlive?: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (isAlive && !(await isAlive())) throw new Error(`the process serving ${url} exited (last: ${last})`);
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
