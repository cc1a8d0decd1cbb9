/** `tern-agent dump` copying state while the agent and its daemons keep writing it. */
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copyListed } from "../../src/commands/dump.ts";

describe("dump: copying listed files", () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("notes a file that is gone by the time it is copied and copies the rest", async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-dump-copy-"));
    const from = join(dir, "state");
    const to = join(dir, "copy");
    await mkdir(join(from, "sub"), { recursive: true });
    await writeFile(join(from, "status.json"), "{}", { mode: 0o644 });
    await writeFile(join(from, "status.json.tmp-1"), "{}", { mode: 0o644 });
    await writeFile(join(from, "sub", "lease.csv"), "lease", { mode: 0o644 });
    const entries = await readdir(from, { withFileTypes: true, recursive: true });
    // Renamed away by its writer after the listing, as the agent's atomic writes do.
    await unlink(join(from, "status.json.tmp-1"));

    const notes: string[] = [];
    await copyListed(entries, from, to, false, notes);

    expect(notes).toEqual([`${join(from, "status.json.tmp-1")}: gone while the dump was made, not copied`]);
    expect(await readFile(join(to, "status.json"), "utf8")).toBe("{}");
    expect(await readFile(join(to, "sub", "lease.csv"), "utf8")).toBe("lease");
  });
});
