/**
 * `npm run bench [-- --quick] [--case NAME …] [--list] [--out DIR]`
 * Runs the benchmark cases, prints the table and writes
 * bench/results/<stamp>.json and .md. Exit 1 only when a case crashed;
 * no number ever fails the run. See docs/bench.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { defaultRegistry } from "./cases/index.ts";
import { applyPackageSettings } from "./host-settings.ts";
import { renderMarkdown, renderTable } from "./render.ts";
import { writeResults } from "./results.ts";
import { runBench } from "./runner.ts";
import { overrideFleetSizes } from "./server/connect.ts";
import type { BenchMode } from "./types.ts";

export const DEV_DATABASE_URL = "postgres://postgres@127.0.0.1:55433/postgres";
const REPO_DIR = fileURLToPath(new URL("../../../", import.meta.url));

/** The only place the benchmarks read the environment. */
export function databaseUrlFrom(env: NodeJS.ProcessEnv): string {
  return env.TERN_BENCH_DATABASE_URL || env.TERN_TEST_DATABASE_URL || DEV_DATABASE_URL;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      quick: { type: "boolean", default: false },
      case: { type: "string", multiple: true },
      list: { type: "boolean", default: false },
      out: { type: "string" },
      devices: { type: "string" },
      profile: { type: "string" },
      "server-env": { type: "string", multiple: true },
      db: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  const registry = defaultRegistry();
  if (values.help) {
    console.log(
      "usage: npm run bench [-- --quick] [--case NAME ...] [--devices N[,N...]] [--profile DIR] [--server-env KEY=VALUE ...] [--db pg|pglite] [--list] [--out DIR]",
    );
    return 0;
  }
  const mode: BenchMode = values.quick ? "quick" : "full";
  if (values.devices) {
    const sizes = values.devices.split(",").map(Number);
    if (sizes.some((n) => !Number.isInteger(n) || n < 5)) {
      console.error("--devices takes whole numbers of at least 5, e.g. --devices 1000,5000");
      return 2;
    }
    overrideFleetSizes(sizes);
  }
  if (values.list) {
    for (const c of registry.list()) {
      console.log(`${c.name.padEnd(22)} ${c.kind.padEnd(9)} ${c.title}`);
      for (const p of c.sizes(mode)) console.log(`${"".padEnd(32)}${JSON.stringify(p)}`);
    }
    return 0;
  }
  const serverEnv: Record<string, string> = {};
  for (const pair of values["server-env"] ?? []) {
    const eq = pair.indexOf("=");
    if (eq < 0 || !/^TERN_[A-Z0-9_]+$/.test(pair.slice(0, eq))) {
      console.error(`--server-env takes TERN_NAME=value (a setting of docs/server.md), not ${JSON.stringify(pair)}`);
      return 2;
    }
    serverEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (values.db !== undefined && values.db !== "pg" && values.db !== "pglite") {
    console.error(
      `--db takes pg or pglite (the sizes on that database; the others are left out), not ${JSON.stringify(values.db)}`,
    );
    return 2;
  }
  const only = (values.case ?? []).flatMap((c) => c.split(",")).filter(Boolean);
  for (const name of only) registry.get(name);
  const tmpDir = await mkdtemp(join(os.tmpdir(), "tern-bench-"));
  const host = applyPackageSettings(REPO_DIR);
  for (const s of host.settings)
    if (s.raisedFrom !== undefined)
      console.error(`[bench] ${s.key} = ${s.value} for the run (as the server package sets it; was ${s.raisedFrom})`);
  try {
    const run = await runBench({
      mode,
      registry,
      only,
      ...(values.db ? { db: values.db } : {}),
      env: {
        databaseUrl: databaseUrlFrom(process.env),
        tmpDir,
        ...(values.profile ? { profileDir: resolve(values.profile) } : {}),
        serverEnv,
      },
      repoDir: REPO_DIR,
      log: (m) => console.error(`[bench] ${m}`),
    });
    const result = { ...run, hostSettings: host.settings };
    console.log(`\n${renderTable(result.cases)}\n`);
    const descriptions = new Map(registry.list().map((c) => [c.name, c.description]));
    const files = await writeResults(
      resolve(values.out ?? join(REPO_DIR, "bench", "results")),
      result,
      renderMarkdown(result, descriptions),
    );
    console.log(`wrote ${files.json}\nwrote ${files.markdown}`);
    const errors = result.cases.filter((c) => c.status === "error");
    if (errors.length > 0) console.error(`[bench] ${errors.length} case(s) crashed: ${errors.map((c) => c.case).join(", ")}`);
    return errors.length > 0 ? 1 : 0;
  } finally {
    host.restore();
    await rm(tmpDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) process.exit(await main());
