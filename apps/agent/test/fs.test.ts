import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../src/fs.ts";

describe("writeFileAtomic", () => {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  it("writes with the given mode, creating directories", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tern-fs-"));
    made.push(dir);
    const path = join(dir, "a", "b", "secret.conf");
    expect(await writeFileAtomic(path, "psk = x\n", 0o600)).toBe(true);
    expect(await readFile(path, "utf8")).toBe("psk = x\n");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
  it("does not rewrite unchanged content and leaves no temp files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tern-fs-"));
    made.push(dir);
    const path = join(dir, "x.conf");
    await writeFileAtomic(path, "one");
    const before = (await stat(path)).mtimeMs;
    expect(await writeFileAtomic(path, "one")).toBe(false);
    expect((await stat(path)).mtimeMs).toBe(before);
    expect(await writeFileAtomic(path, "two")).toBe(true);
    expect(await readdir(dir)).toEqual(["x.conf"]);
  });
});
