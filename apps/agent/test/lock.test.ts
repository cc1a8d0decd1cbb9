import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquirePidLock } from "../src/lock.ts";
import { pidAlive } from "../src/process.ts";
import { tempDirs } from "./support/context.ts";

describe("pid lock", () => {
  it("tells live, dead and zombie processes apart", async () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(0)).toBe(false);
    // The child exits after 0.2 s, when its parent is already `sleep 5` (after exec), which never reaps it: a zombie.
    const sh = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const zombie = Number((await new Promise<Buffer>((r) => sh.stdout.once("data", r))).toString().trim());
      await expect.poll(async () => (await readFile(`/proc/${zombie}/stat`, "utf8")).split(" ")[2]).toBe("Z");
      expect(pidAlive(zombie)).toBe(false);
      expect(pidAlive(sh.pid ?? 0)).toBe(true);
    } finally {
      sh.kill("SIGKILL");
    }
  });

  it("is exclusive, released by its holder, and taken over from a dead holder", async () => {
    const dirs = await tempDirs("lock");
    try {
      const path = join(dirs.runDir, "agent.lock");
      const lock = await acquirePidLock(path, "testing");
      expect((await readFile(path, "utf8")).trim()).toBe(String(process.pid));
      await lock.release();
      await expect(readFile(path, "utf8")).rejects.toThrow(/ENOENT/);
      await writeFile(path, "999999999\n");
      const taken = await acquirePidLock(path, "testing");
      expect((await readFile(path, "utf8")).trim()).toBe(String(process.pid));
      await taken.release();
    } finally {
      await dirs.remove();
    }
  });
});
