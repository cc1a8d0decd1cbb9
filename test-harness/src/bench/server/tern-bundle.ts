/**
 * Tern's server as users run it: a bundle on plain node with source maps
 * (`npm run build`, then `node --enable-source-maps dist/main.js`), not
 * TypeScript through tsx. The bench bundles its server worker (which imports
 * the server's sources) with the project's own bundler, scripts/bundle.mjs,
 * once per run. Through tsx the same server held 70–85 MiB more at rest
 * (tsx's loader thread, the transpiled sources and their inline maps), which
 * no installed server has.
 *
 * The bundle goes under test-harness/node_modules/.cache, so what it leaves
 * external (PGlite and its WebAssembly) resolves from the checkout's
 * node_modules; each bench process has its own directory, removed when it exits.
 */
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const HARNESS_DIR = fileURLToPath(new URL("../../../", import.meta.url));
const BUNDLER = fileURLToPath(new URL("../../../../scripts/bundle.mjs", import.meta.url));

let built: Promise<string> | null = null;

/** The path of the bundled server worker (workers/tern-server.ts), built on first use. */
export function ternServerBundle(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  const outdir = join(HARNESS_DIR, "node_modules", ".cache", "tern-bench", `server-${process.pid}`);
  process.once("exit", () => rmSync(outdir, { recursive: true, force: true }));
  await promisify(execFile)(process.execPath, [
    BUNDLER,
    HARNESS_DIR,
    "src/bench/workers/tern-server.ts",
    // The embedded database's thread, where the server looks for it (db/pglite-thread/client.ts).
    "db/pglite-thread/thread=../apps/server/src/db/pglite-thread/thread.ts",
    "--outdir",
    outdir,
    "--external",
    "@electric-sql/pglite",
    "--minify",
  ]);
  return join(outdir, "bench", "workers", "tern-server.js");
}
