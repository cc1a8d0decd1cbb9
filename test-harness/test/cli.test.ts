/** The `lab` command line: exit codes and machine codes for bad input (no root needed). */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = join(import.meta.dirname, "..", "src", "cli", "main.ts");
const lab = (args: string[], stateDir: string) =>
  execa(process.execPath, ["--import", "tsx", CLI, ...args, "--state-dir", stateDir], { reject: false, timeout: 30_000 });

describe("lab CLI", { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-lab-cli-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("rejects an invalid topology with TOPOLOGY_INVALID and the line, before touching anything", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(file, "name: bad\nclouds:\n  - name: inet\nedges:\n  - name: e1\n    wan: [{ cloud: nowhere }]\n");
    const r = await lab(["up", file, "--no-control"], join(dir, "state"));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("lab: error [TOPOLOGY_INVALID]");
    expect(r.stderr).toMatch(/bad\.yaml:6:\d+: edges\.0\.wan\.0\.cloud: unknown cloud 'nowhere'/);
  });

  it("says TOPOLOGY_NOT_FOUND for a missing file and LAB_NOT_FOUND when no lab is up", async () => {
    const missing = await lab(["up", join(dir, "nope.yaml")], join(dir, "state"));
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("[TOPOLOGY_NOT_FOUND]");
    const status = await lab(["status"], join(dir, "state"));
    expect(status.exitCode).toBe(1);
    expect(status.stderr).toContain("[LAB_NOT_FOUND]");
  });

  it("answers usage errors with exit 2", async () => {
    const r = await lab(["impair"], join(dir, "state"));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("[USAGE]");
    const unknown = await lab(["up", "x.yaml", "--bogus"], join(dir, "state"));
    expect(unknown.exitCode).toBe(2);
  });

  it("is idempotent for down: a lab that is not up is nothing to do", async () => {
    const r = await lab(["down", "ghost"], join(dir, "state"));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("lab 'ghost' is not up: nothing to do");
  });
});
