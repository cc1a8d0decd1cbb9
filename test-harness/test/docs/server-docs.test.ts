/**
 * Runs the `run` blocks of the documents marked `<!-- doc-test: session server -->`
 * (README.md, docs/server.md, docs/cli.md …), each in order in one bash session,
 * against a fresh server on the embedded database (src/docs/server-session.ts).
 * A changed route or flag that breaks a walk-through fails here, naming the
 * document, the block and the line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { docTestBlocks } from "../../src/docs/blocks.ts";
import { describeFailure, runDocBlocks } from "../../src/docs/runner.ts";
import { REPO_ROOT, type ServerSession, startServerSession } from "../../src/docs/server-session.ts";

const DOCUMENTS = ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).map((f) => `docs/${f}`)]
  .filter((d) => d.endsWith(".md"))
  .map((name) => ({ name, doc: docTestBlocks(readFileSync(join(REPO_ROOT, name), "utf8")) }))
  .filter((d) => d.doc.session === "server");

describe("docs run against a fresh server", () => {
  let session: ServerSession | undefined;
  afterEach(async () => {
    await session?.stop();
    session = undefined;
  });

  it("has the documents the issue names", () => {
    expect(DOCUMENTS.map((d) => d.name)).toEqual(expect.arrayContaining(["README.md", "docs/server.md", "docs/cli.md"]));
  });

  for (const { name, doc } of DOCUMENTS) {
    const run = doc.blocks.filter((b) => b.marker?.kind === "run");
    it(`${name}: its ${run.length} run blocks, in order`, { timeout: 300_000 }, async () => {
      expect(run.length).toBeGreaterThan(0);
      session = await startServerSession();
      const r = await runDocBlocks(name, run, { cwd: REPO_ROOT, env: session.env, timeoutMs: 240_000 });
      console.log(
        `${name}: ${run.length} blocks in ${(r.ms / 1000).toFixed(1)} s (${r.blockSeconds.map((b) => `line ${b.line}: ${b.seconds} s`).join(", ")})`,
      );
      expect(r.failure, describeFailure(r)).toBeNull();
      expect(r.exitCode, describeFailure(r)).toBe(0);
    });
  }
});
