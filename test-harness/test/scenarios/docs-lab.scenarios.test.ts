/**
 * Runs the `run` blocks of the documents marked `<!-- doc-test: session lab -->`
 * (docs/lab.md, docs/quickstart.md), each in order in one bash session as root,
 * the way a reader follows them: `npm run lab -- up`, the `tern` CLI, curl,
 * a webhook receiver, `down`. Each document gets its own lab state root and
 * free ports (PORT, HOOK_PORT), and `tern`'s login goes to a temporary
 * XDG_CONFIG_HOME, so nothing of the machine's own is touched.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listNetns, privilegedTestsEnabled } from "@tern/netlab";
import { afterEach, describe, expect, it } from "vitest";
import { docTestBlocks } from "../../src/docs/blocks.ts";
import { describeFailure, runDocBlocks } from "../../src/docs/runner.ts";
import { REPO_ROOT } from "../../src/docs/server-session.ts";
import { freeLoopbackPort } from "../../src/lab/control/server.ts";
import { labDown } from "../../src/lab/down.ts";
import { SCENARIO_COMMANDS } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("docs run in a lab", SCENARIO_COMMANDS);

const DOCUMENTS = readdirSync(join(REPO_ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`)
  .map((name) => ({ name, doc: docTestBlocks(readFileSync(join(REPO_ROOT, name), "utf8")) }))
  .filter((d) => d.doc.session === "lab");

describe.runIf(enabled)("docs run in a lab", () => {
  let stateRoot: string | undefined;
  afterEach(async () => {
    if (!stateRoot) return;
    // A document that failed half way leaves its lab up: take it down from its state.
    for (const lab of readdirSync(stateRoot).filter((d) => existsSync(join(stateRoot!, d, "state.json"))))
      await labDown(stateRoot, lab);
    await rm(stateRoot, { recursive: true, force: true });
    stateRoot = undefined;
  });

  it("has the documents the issue names", () => {
    expect(DOCUMENTS.map((d) => d.name)).toEqual(expect.arrayContaining(["docs/lab.md", "docs/quickstart.md"]));
  });

  for (const { name, doc } of DOCUMENTS) {
    const run = doc.blocks.filter((b) => b.marker?.kind === "run");
    it(`${name}: its ${run.length} run blocks, in order, and nothing left behind`, { timeout: 1_200_000 }, async () => {
      expect(run.length).toBeGreaterThan(0);
      stateRoot = await mkdtemp(join(tmpdir(), "tern-doc-lab-"));
      // FRR drops to its own user and must reach its directory (test/helpers.ts tempStateRoot).
      await chmod(stateRoot, 0o755);
      const before = new Set(await listNetns());
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LANG: "C.UTF-8",
        TERN_LAB_DIR: stateRoot,
        PORT: String(await freeLoopbackPort()),
        HOOK_PORT: String(await freeLoopbackPort()),
        TMPDIR: stateRoot,
        XDG_CONFIG_HOME: join(stateRoot, ".config"),
        ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      };
      const r = await runDocBlocks(name, run, { cwd: REPO_ROOT, env, timeoutMs: 900_000 });
      console.log(
        `${name}: ${run.length} blocks in ${(r.ms / 1000).toFixed(1)} s (${r.blockSeconds.map((b) => `line ${b.line}: ${b.seconds} s`).join(", ")})`,
      );
      expect(r.failure, describeFailure(r)).toBeNull();
      expect(r.exitCode, describeFailure(r)).toBe(0);
      // The document ends with `down`: no namespace of its lab is left.
      const left = (await listNetns()).filter((ns) => !before.has(ns) && ns.startsWith("tn-lab-"));
      expect(left).toEqual([]);
    });
  }
});
