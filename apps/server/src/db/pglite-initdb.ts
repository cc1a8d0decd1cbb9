/**
 * A new embedded database is made (PGlite's initdb) by a child process that
 * then exits, and only then opened by the server. initdb runs in WebAssembly
 * instances whose memory only grows: made in the server's own process it left
 * the server at about 365 MiB of RSS for the rest of its life (after a full
 * collection), against about 265–300 MiB for the same server on an existing
 * data directory. A worker thread was not enough: the process kept about
 * 190 MiB of the worker's memory after it exited. A child's memory goes with
 * the child.
 *
 * The directory is made beside the target and renamed into place once PGlite
 * has shut it down cleanly: a server killed during initdb leaves a stray
 * `<dir>.new-*` directory, never a half-made database that the next start
 * would try to open.
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, rmdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/** PostgreSQL's own mark of a data directory (initdb writes it). */
export function isDataDir(dir: string): boolean {
  return existsSync(join(dir, "PG_VERSION"));
}

// Run by `node -e` (CommonJS): PGlite is imported by its resolved path, since the child has no module of its own to
// resolve from; what to make comes as one JSON argument. Its exit code says whether it worked, stderr why not.
const CHILD = `
const job = JSON.parse(process.argv[1]);
(async () => {
  const { PGlite } = await import(job.pglite);
  const db = await PGlite.create({ dataDir: job.dataDir, startParams: [...PGlite.defaultStartParams, ...job.startParams] });
  await db.close();
})().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(String(err && err.message ? err.message : err));
    process.exit(1);
  },
);
`;

/**
 * Makes `dataDir` a new database unless it already is one; `dataDir` may exist, empty. `startParams`: PostgreSQL
 * options after PGlite's defaults (`-c name=value` pairs).
 */
export async function createDataDirInChild(dataDir: string, startParams: string[]): Promise<void> {
  if (isDataDir(dataDir)) return;
  if (existsSync(dataDir) && (await readdir(dataDir)).length > 0)
    throw new Error(`${dataDir} is neither empty nor a PostgreSQL data directory (no PG_VERSION): refusing to use it`);
  const staging = `${dataDir}.new-${randomBytes(4).toString("hex")}`;
  await mkdir(dirname(dataDir), { recursive: true, mode: 0o700 });
  const pglite = pathToFileURL(createRequire(import.meta.url).resolve("@electric-sql/pglite")).href;
  try {
    await runChild({ pglite, dataDir: staging, startParams });
    if (!isDataDir(staging)) throw new Error("initdb finished without writing PG_VERSION");
    if (existsSync(dataDir)) await rmdir(dataDir);
    await rename(staging, dataDir);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw new Error(`creating the embedded database in ${dataDir} failed: ${(err as Error).message}`);
  }
}

function runChild(job: { pglite: string; dataDir: string; startParams: string[] }): Promise<void> {
  return new Promise((resolve, reject) => {
    // The server's own node, without its flags (a --inspect port or --cpu-prof would clash or be written twice).
    const child = spawn(process.execPath, ["-e", CHILD, "--", JSON.stringify(job)], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < 4096) stderr += d;
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(stderr.trim() || `initdb's process ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}
