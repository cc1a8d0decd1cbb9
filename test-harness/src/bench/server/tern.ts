/**
 * The parent's side of a server benchmark: a scratch database (its own
 * PostgreSQL database, created and dropped by the run, or a PGlite data
 * directory), the seeded fleet, Tern's server as a child process, and an
 * admin session for API calls.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { redactUrl } from "../cases/util.ts";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { type BenchContext, SkipCase } from "../types.ts";
import { ADMIN_EMAIL, ADMIN_PASSWORD, type SeedResult } from "./seed.ts";
import { ternServerBundle } from "./tern-bundle.ts";

export type DbTarget = "pg" | "pglite";

export interface Scratch {
  target: DbTarget;
  /** PostgreSQL URL of the scratch database (pg). */
  url?: string;
  /** TERN_DATA_DIR (pglite; the database is in <dir>/pgdata). */
  dataDir?: string;
  drop(): Promise<void>;
}

/** A database of its own for one measurement: `tern_bench_<random>` on the server of TERN_BENCH_DATABASE_URL, or a PGlite directory. */
export async function scratchDatabase(target: DbTarget, ctx: BenchContext): Promise<Scratch> {
  if (target === "pglite") {
    const dataDir = await mkdtemp(join(ctx.env.tmpDir, "tern-pglite-"));
    return { target, dataDir, drop: async () => {} };
  }
  const admin = new pg.Client({ connectionString: ctx.env.databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new SkipCase(`PostgreSQL at ${redactUrl(ctx.env.databaseUrl)} is not reachable: ${(err as Error).message}`);
  }
  const name = `tern_bench_${randomBytes(4).toString("hex")}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ctx.env.databaseUrl);
  url.pathname = `/${name}`;
  return {
    target,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: ctx.env.databaseUrl, connectionTimeoutMillis: 5000 });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface SeedRequest {
  devices: number;
  configure: boolean;
  finishedJobs?: boolean;
  /** One notification per device. */
  notifications?: boolean;
  /** The first `pending` devices are not approved. */
  pending?: number;
}

export interface Fleet {
  scratch: Scratch;
  secretKey: string;
  tokenSecret: string;
  seed: SeedResult;
}

/** Seeds the scratch database in a process of its own (the server's heap starts clean). */
export async function seedScratch(scratch: Scratch, req: SeedRequest, ctx: BenchContext): Promise<Fleet> {
  const secretKey = randomBytes(32).toString("base64");
  const tokenSecret = randomBytes(6).toString("hex");
  const seeder = spawnWorker(workerPath("tern-seeder"));
  try {
    await seeder.ready;
    const t0 = performance.now();
    const seed = await seeder.call<SeedResult>(
      "seed",
      {
        target: scratch.target,
        url: scratch.url,
        dataDir: scratch.dataDir,
        options: {
          devices: req.devices,
          configure: req.configure,
          finishedJobs: req.finishedJobs ?? false,
          notifications: req.notifications ?? false,
          pending: req.pending ?? 0,
          secretKey,
          tokenSecret,
        },
      },
      1_800_000,
    );
    ctx.log(
      `  seeded ${seed.devices} devices, ${seed.tunnels} tunnels, ${seed.jobs} jobs on ${scratch.target} in ${((performance.now() - t0) / 1000).toFixed(1)} s` +
        (req.configure ? ` (compile and queue ${(seed.compileMs / 1000).toFixed(1)} s)` : ""),
    );
    return { scratch, secretKey, tokenSecret, seed };
  } finally {
    await seeder.stop();
  }
}

export interface TernServer {
  worker: Worker;
  url: string;
  wsUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Tern's server on the fleet's database, in a child process (with --expose-gc for live-memory readings),
 * bundled and run on plain node as an installed server runs (tern-bundle.ts).
 */
export async function startTern(
  fleet: Pick<Fleet, "scratch" | "secretKey">,
  ctx: BenchContext,
  env: Record<string, string> = {},
): Promise<TernServer> {
  const profile = ctx.env.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${ctx.env.profileDir}`] : [];
  const worker = spawnWorker(await ternServerBundle(), {
    loader: false,
    nodeFlags: ["--enable-source-maps", "--expose-gc", ...profile],
  });
  await worker.ready;
  const { scratch } = fleet;
  const logFile = join(ctx.env.tmpDir, `tern-server-${worker.pid}.log`);
  const config: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    TERN_SECRET_KEY: fleet.secretKey,
    TERN_DATA_DIR: scratch.dataDir ?? join(ctx.env.tmpDir, "unused-data-dir"),
    TERN_LOG_LEVEL: "info",
    // One admin session for the whole measurement.
    TERN_ACCESS_TOKEN_TTL: "86400",
    // The bench's API load comes from one address and one admin token: measure the server, not its rate limit.
    TERN_API_RATE_TOKEN: "100000000",
    TERN_API_RATE_ADDRESS: "100000000",
    ...(scratch.url ? { DATABASE_URL: scratch.url } : {}),
    ...ctx.env.serverEnv,
    ...env,
  };
  const started = await worker.call<{ url: string; pid: number }>("start", { env: config, logFile }, 300_000);
  return {
    worker,
    url: started.url,
    wsUrl: `${started.url.replace(/^http/, "ws")}/api/connect/ws`,
    pid: worker.pid,
    async stop() {
      await worker.call("stop", {}, 60_000).catch(() => undefined);
      await worker.stop();
    },
  };
}

/** An access JWT of the seeded admin. */
export async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  if (!res.ok) throw new Error(`login: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

export async function api<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}
