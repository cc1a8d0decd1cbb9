/**
 * The management server as a lab process: `apps/server/src/main.ts` run with
 * tsx in the root namespace, listening on a loopback port, on its embedded
 * database in the lab directory unless DATABASE_URL is given.
 *
 * Contract with apps/server (to confirm when issue 3 lands):
 * - env PORT, HOST, TERN_DATA_DIR, DATABASE_URL, TERN_LOG_LEVEL (apps/server/src/config.ts);
 * - env TERN_BOOTSTRAP_ADMIN_EMAIL / TERN_BOOTSTRAP_ADMIN_PASSWORD create the first
 *   owner account on an empty database (proposed; the lab needs one admin to drive the API);
 * - GET READY_PATH answers 200 once the API and the device gateway accept requests.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import type { ProcessSpec } from "../supervisor.ts";

export const READY_PATH = "/api/health";

export interface ServerOptions {
  repoRoot: string;
  labDir: string;
  port: number;
  /** postgres://… to use a PostgreSQL server; the embedded database otherwise. */
  databaseUrl?: string;
  admin: { email: string; password: string };
  logLevel?: string;
}

export function serverSpec(o: ServerOptions): ProcessSpec {
  const env: Record<string, string> = {
    PORT: String(o.port),
    HOST: "127.0.0.1",
    TERN_DATA_DIR: join(o.labDir, "server-data"),
    TERN_LOG_LEVEL: o.logLevel ?? "info",
    TERN_BOOTSTRAP_ADMIN_EMAIL: o.admin.email,
    TERN_BOOTSTRAP_ADMIN_PASSWORD: o.admin.password,
  };
  if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
  return {
    key: "control:server",
    role: "server",
    argv: [join(o.repoRoot, "node_modules", ".bin", "tsx"), join(o.repoRoot, "apps", "server", "src", "main.ts")],
    env,
    cwd: o.repoRoot,
    log: join(o.labDir, "server.log"),
  };
}

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released). */
export async function freeLoopbackPort(): Promise<number> {
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
