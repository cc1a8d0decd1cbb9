/**
 * The rollback guard with real processes: the real launcher (bin/tern-agent) runs `upgrade-guard`, which
 * starts the new version through the launcher (which follows versions/current), and
 * - a new version that exits at once is rolled back: current points at the previous version again, the
 *   marker says why, and the previous version runs again;
 * - a new version that runs but never commits is stopped and rolled back at the deadline;
 * - a new version that commits keeps running and the guard leaves;
 * - the launcher itself rolls back an overdue pending upgrade at start (the guard did not survive a reboot).
 * The "versions" are small scripts that log their start to <state>/ran.log.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readMarker, type UpgradeMarker, writeMarker } from "../../src/upgrade/marker.ts";

const LAUNCHER = resolve(import.meta.dirname, "../../bin/tern-agent");
const started: number[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const pid of started.splice(0))
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A version whose "agent" logs `<version> <pid>` and then does what `body` says. */
const version = (v: string, body: string) => `import { appendFileSync } from "node:fs";
const stateDir = process.argv[process.argv.indexOf("--state-dir") + 1];
appendFileSync(stateDir + "/ran.log", "${v} " + process.pid + "\\n");
${body}
`;
const STAYS = `setInterval(() => {}, 1000); process.on("SIGTERM", () => process.exit(0));`;

async function stateWith(versions: Record<string, string>, current: string): Promise<string> {
  const stateDir = await mkdtemp(join(tmpdir(), "tern-guard-"));
  dirs.push(stateDir);
  for (const [v, script] of Object.entries(versions)) {
    await mkdir(join(stateDir, "versions", v, "dist"), { recursive: true });
    await writeFile(join(stateDir, "versions", v, "dist", "cli.js"), script);
  }
  await symlink(current, join(stateDir, "versions", "current"));
  return stateDir;
}

function marker(stateDir: string, over: Partial<UpgradeMarker> = {}): UpgradeMarker {
  return {
    upgradeId: "7d8e2f0a-6b1c-4b8e-9f3a-1c2d3e4f5a6b",
    from: "1.0.0",
    to: "2.0.0",
    state: "pending",
    previous: "1.0.0",
    deadline: Date.now() + 30_000,
    healthTimeoutSec: 30,
    tunnelsUp: [],
    hadConfig: false,
    oldPid: 0,
    lockFile: join(stateDir, "run", "agent.lock"),
    relaunch: [process.execPath, LAUNCHER, "run", "--state-dir", stateDir],
    cwd: stateDir,
    ...over,
  };
}

/** Runs the guard to its end; returns its stderr. */
async function runGuard(stateDir: string): Promise<string> {
  const child = spawn(process.execPath, [LAUNCHER, "upgrade-guard", stateDir], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => {
    err += String(d);
  });
  const code = await new Promise<number | null>((res) => child.on("exit", res));
  expect(code, err).toBe(0);
  return err;
}

async function ranLog(stateDir: string, lines: number, ms = 10_000): Promise<[string, number][]> {
  const until = Date.now() + ms;
  for (;;) {
    const text = await readFile(join(stateDir, "ran.log"), "utf8").catch(() => "");
    const entries = text
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ") as [string, string])
      .map(([v, pid]) => [v, Number(pid)] as [string, number]);
    for (const [, pid] of entries) if (!started.includes(pid)) started.push(pid);
    if (entries.length >= lines || Date.now() > until) return entries;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("upgrade guard (real launcher, real processes)", () => {
  it("a new version that exits at once is rolled back and the previous version runs again", async () => {
    const stateDir = await stateWith(
      { "1.0.0": version("1.0.0", STAYS), "2.0.0": version("2.0.0", "process.exit(3);") },
      "2.0.0",
    );
    await writeMarker(stateDir, marker(stateDir));
    const log = await runGuard(stateDir);
    expect(log).toMatch(/version 2.0.0 exited \(code 3\) before it was healthy: rolling back to 1.0.0/);
    expect(await readlink(join(stateDir, "versions", "current"))).toBe("1.0.0");
    expect(await readMarker(stateDir)).toMatchObject({
      state: "rolled-back",
      detail: "version 2.0.0 exited (code 3) before it was healthy",
    });
    const ran = await ranLog(stateDir, 2);
    expect(ran.map(([v]) => v)).toEqual(["2.0.0", "1.0.0"]);
    expect(alive(ran[1]![1])).toBe(true);
  });

  it("a new version that runs but never commits is stopped and rolled back at the deadline", async () => {
    const stateDir = await stateWith({ "1.0.0": version("1.0.0", STAYS), "2.0.0": version("2.0.0", STAYS) }, "2.0.0");
    await writeMarker(stateDir, marker(stateDir, { deadline: Date.now() + 1500, healthTimeoutSec: 1 }));
    const log = await runGuard(stateDir);
    expect(log).toMatch(/version 2.0.0 was not healthy within 1 s: rolling back/);
    const ran = await ranLog(stateDir, 2);
    expect(ran.map(([v]) => v)).toEqual(["2.0.0", "1.0.0"]);
    expect(alive(ran[0]![1])).toBe(false);
    expect(alive(ran[1]![1])).toBe(true);
    expect(await readlink(join(stateDir, "versions", "current"))).toBe("1.0.0");
  });

  it("a new version that commits keeps running; the guard leaves", async () => {
    const commits = `import { readFileSync, writeFileSync } from "node:fs";
const f = stateDir + "/upgrade/marker.json";
writeFileSync(f, JSON.stringify({ ...JSON.parse(readFileSync(f, "utf8")), state: "committed" }));
${STAYS}`;
    const stateDir = await stateWith({ "1.0.0": version("1.0.0", STAYS), "2.0.0": version("2.0.0", commits) }, "2.0.0");
    await writeMarker(stateDir, marker(stateDir));
    const log = await runGuard(stateDir);
    expect(log).toMatch(/version 2.0.0 is healthy: upgrade committed/);
    const ran = await ranLog(stateDir, 1);
    expect(ran.map(([v]) => v)).toEqual(["2.0.0"]);
    expect(alive(ran[0]![1])).toBe(true);
    expect(await readlink(join(stateDir, "versions", "current"))).toBe("2.0.0");
  });

  it("the launcher rolls back an overdue pending upgrade at start, before running anything", async () => {
    const stateDir = await stateWith(
      { "1.0.0": version("1.0.0", "process.exit(0);"), "2.0.0": version("2.0.0", "process.exit(0);") },
      "2.0.0",
    );
    await writeMarker(stateDir, marker(stateDir, { deadline: Date.now() - 1000 }));
    const child = spawn(process.execPath, [LAUNCHER, "run", "--state-dir", stateDir], { stdio: "ignore" });
    expect(await new Promise((res) => child.on("exit", res))).toBe(0);
    expect((await ranLog(stateDir, 1)).map(([v]) => v)).toEqual(["1.0.0"]);
    expect(await readMarker(stateDir)).toMatchObject({ state: "rolled-back" });
  });

  it("the guard waits for the old agent to exit before it starts the new version", async () => {
    const stateDir = await stateWith({ "1.0.0": version("1.0.0", STAYS), "2.0.0": version("2.0.0", STAYS) }, "2.0.0");
    const old = spawn(process.execPath, ["-e", "setTimeout(() => {}, 800)"], { stdio: "ignore" });
    await writeMarker(stateDir, marker(stateDir, { oldPid: old.pid!, deadline: Date.now() + 2500, healthTimeoutSec: 2 }));
    const oldExit = new Promise<number>((res) => old.on("exit", () => res(Date.now())));
    const guard = runGuard(stateDir);
    const ran = await ranLog(stateDir, 1);
    const firstStart = Date.now();
    expect(ran[0]![0]).toBe("2.0.0");
    expect(firstStart).toBeGreaterThanOrEqual(await oldExit);
    await guard;
  });
});
