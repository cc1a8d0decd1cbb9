/** Detached lab processes: recorded by pid + start time, never signalled once the pid is reused. */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findMarked, isAlive, procStartTime, startProcess, stopProcess } from "../src/lab/supervisor.ts";

describe.runIf(process.platform === "linux")("supervisor", () => {
  let dir: string;
  const marker = `test-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-supervisor-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("starts a detached process with its output in the log and finds it by marker", async () => {
    const rec = await startProcess(
      { key: "t", role: "test", argv: ["sh", "-c", "echo started; exec sleep 30"], log: join(dir, "a.log") },
      marker,
    );
    expect(rec.startTime).toBe(await procStartTime(rec.pid));
    expect(await isAlive(rec)).toBe(true);
    expect((await findMarked(marker)).map((p) => p.pid)).toEqual([rec.pid]);
    for (let i = 0; i < 50 && !(await readFile(join(dir, "a.log"), "utf8")).includes("started"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await readFile(join(dir, "a.log"), "utf8")).toContain("started");
    await stopProcess(rec);
    expect(await isAlive(rec)).toBe(false);
    expect(await findMarked(marker)).toEqual([]);
  });

  it("never signals a pid whose start time differs (a reused pid)", async () => {
    const rec = await startProcess({ key: "t2", role: "test", argv: ["sleep", "30"], log: join(dir, "b.log") }, marker);
    await stopProcess({ pid: rec.pid, startTime: "1" }, 100);
    expect(await isAlive(rec)).toBe(true);
    await stopProcess(rec);
    expect(await isAlive(rec)).toBe(false);
  });

  it("escalates to SIGKILL when SIGTERM is ignored", async () => {
    const rec = await startProcess(
      { key: "t3", role: "test", argv: ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"], log: join(dir, "c.log") },
      marker,
    );
    await new Promise((r) => setTimeout(r, 100));
    await stopProcess(rec, 300);
    expect(await isAlive(rec)).toBe(false);
  });

  it("reports a command that cannot start", async () => {
    await expect(
      startProcess({ key: "t4", role: "test", argv: ["/nonexistent/tern-cmd"], log: join(dir, "d.log") }, marker),
    ).rejects.toThrow(/cannot start \/nonexistent\/tern-cmd/);
  });
});
