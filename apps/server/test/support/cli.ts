/**
 * `tern-server` as a process, the way an operator runs it: bin/tern-server
 * with arguments, an environment of its own (nothing of the test runner's
 * TERN_* or DATABASE_URL leaks in), stdin, exit code and output.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPostgresDatabase, testDatabaseKind } from "./test-database.ts";

export const SERVER_DIR = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(SERVER_DIR, "bin/tern-server");

/** Low scrypt cost for every spawned command (production uses 17). */
const BASE_ENV = { TERN_PASSWORD_HASH_COST: "10" };

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...BASE_ENV, ...env };
}

/** Runs one command to its end. */
export function runTernServer(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? SERVER_DIR,
    env: childEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  child.stdin.end(options.input ?? "");
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 240_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

export interface ServeProcess {
  child: ChildProcess;
  /** Resolves with the URL once the server logs that it listens. */
  listening: Promise<string>;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/** `tern-server serve` in the background. */
export function startServe(args: string[], options: CliOptions = {}): ServeProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? SERVER_DIR,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => {
    stdout += d;
  });
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = stdout.split("\n").find((l) => l.includes('"docs"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    };
    child.stdout!.on("data", check);
    exited.then((code) => reject(new Error(`tern-server serve exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
  listening.catch(() => {});
  return {
    child,
    listening,
    exited,
    output: () => ({ stdout, stderr }),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ServerPlace {
  /** TERN_DATA_DIR, and DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  dataDir: string;
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

/** A fresh place for one server: a temp data dir, and a new PostgreSQL database in the postgres project. */
export async function freshServerPlace(kind = testDatabaseKind()): Promise<ServerPlace> {
  const dataDir = path.join(await mkdtemp(path.join(tmpdir(), "tern-cli-")), "data");
  const parent = path.dirname(dataDir);
  if (kind === "pglite") {
    return { env: { TERN_DATA_DIR: dataDir }, dataDir, cleanup: () => rm(parent, { recursive: true, force: true }) };
  }
  const db = await createPostgresDatabase();
  return {
    env: { TERN_DATA_DIR: dataDir, DATABASE_URL: db.url },
    dataDir,
    databaseUrl: db.url,
    cleanup: async () => {
      await db.drop();
      await rm(parent, { recursive: true, force: true });
    },
  };
}

export const randomKey = () => randomBytes(32).toString("base64");

/** The stderr lines that are not empty. */
export const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");
