/**
 * The daemon supervisor with real processes (no root needed): start under
 * start-stop-daemon with a pid file, readiness, TERM then KILL, zombies
 * counted as dead, recycled pids not mistaken for the daemon.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DaemonSpec,
  daemonPid,
  ensureDaemon,
  launchArgv,
  signalDaemon,
  startDaemon,
  stopDaemon,
} from "../../src/daemons/supervisor.ts";
import { pollUntil } from "../../src/daemons/wait.ts";
import { isRunning, processInfo, readPidFile } from "../../src/process.ts";
import { ExecRunner } from "../../src/runner.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";

const runner = new ExecRunner();
const hasSsd = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v start-stop-daemon"]).length > 0;
  } catch {
    return false;
  }
})();

describe.runIf(hasSsd)("daemon supervisor with real processes", () => {
  let dir: TempDirs;
  beforeAll(async () => {
    dir = await tempDirs("sup");
  });
  afterAll(async () => {
    await dir.remove();
  });

  const sleeper = (name: string, script: string): DaemonSpec => ({
    name,
    comm: "sleep",
    argv: ["/bin/sh", "-c", script],
    pidFile: join(dir.root, `${name}.pid`),
    launch: "foreground",
    outputFile: join(dir.root, `${name}.out`),
    readyTimeoutMs: 3_000,
    stopTimeoutMs: 300,
  });

  it("starts a foreground program in the background, finds it again, and stops it with TERM", async () => {
    const spec = sleeper("plain", "exec sleep 30");
    const pid = await startDaemon(runner, spec);
    expect(await readPidFile(spec.pidFile)).toBe(pid);
    expect(await daemonPid(runner, spec)).toBe(pid);
    expect(await ensureDaemon(runner, spec)).toEqual({ pid, started: false });
    expect(await signalDaemon(runner, spec, "CONT")).toBe(true);
    expect(await stopDaemon(runner, spec)).toBe(true);
    expect(await isRunning(runner, pid)).toBe(false);
    await expect(readFile(spec.pidFile)).rejects.toThrow();
    expect(await stopDaemon(runner, spec)).toBe(false);
  });

  it("escalates to KILL when TERM is ignored", async () => {
    const spec = sleeper("stubborn", "trap '' TERM; exec sleep 30");
    const pid = await startDaemon(runner, spec);
    const t0 = Date.now();
    expect(await stopDaemon(runner, spec)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(await isRunning(runner, pid)).toBe(false);
  });

  it("reports a program that dies at start with the tail of its output", async () => {
    const spec = { ...sleeper("broken", "echo 'bad config line 3' >&2; exit 3"), comm: "sh" };
    await expect(startDaemon(runner, spec)).rejects.toMatchObject({
      code: "DAEMON_FAILED",
      message: expect.stringMatching(/bad config line 3/),
    });
  });

  it("reports a program still running at the first look that dies right after (supervisord's startsecs)", async () => {
    // Seen as `sh` for 100 ms: before the settle period, startDaemon took it as started (CI saw that race once
    // with the instant exit above: the first look came between the exec and the exit).
    const spec = { ...sleeper("late", "sleep 0.1; echo 'bad config line 7' >&2; exit 3"), comm: "sh" };
    await expect(startDaemon(runner, spec)).rejects.toMatchObject({
      code: "DAEMON_FAILED",
      message: expect.stringMatching(/exited right after start[\s\S]*bad config line 7/),
    });
    // A program that stays up is started after the same look.
    const up = { ...sleeper("stays", "sleep 30"), comm: "sh", settleMs: 150 };
    const t0 = Date.now();
    const pid = await startDaemon(runner, up);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(await isRunning(runner, pid)).toBe(true);
    await stopDaemon(runner, up);
  });

  it("waits for the readiness socket", async () => {
    const sock = join(dir.root, "ready.sock");
    const spec: DaemonSpec = {
      ...sleeper(
        "sock",
        `sleep 0.3; exec python3 -c "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('${sock}'); s.listen(); time.sleep(30)"`,
      ),
      comm: "python3",
      readySocket: sock,
    };
    const t0 = Date.now();
    await startDaemon(runner, spec);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await stopDaemon(runner, spec);
  });

  it("counts an unreaped zombie as dead", async () => {
    const pidFile = join(dir.root, "zombie.pid");
    // sh forks a short sleep and execs a long one, which never reaps the first: a zombie for as long as sleep runs.
    const parent = spawn("sh", ["-c", `sleep 0.1 & echo $! > ${pidFile}; exec sleep 5`], { stdio: "ignore" });
    try {
      await pollUntil(async () => (await readPidFile(pidFile)) !== null, 2_000);
      const pid = (await readPidFile(pidFile)) as number;
      await pollUntil(async () => (await processInfo(runner, pid))?.stat.startsWith("Z") === true, 2_000);
      expect((await processInfo(runner, pid))?.stat).toMatch(/^Z/);
      expect(await isRunning(runner, pid)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("does not take a recycled pid for the daemon", async () => {
    const spec = sleeper("recycled", "exec sleep 30");
    await writeFile(spec.pidFile, `${process.pid}\n`);
    expect(await daemonPid(runner, spec)).toBeNull();
  });
});

describe("daemon supervisor argv (fake runner)", () => {
  it("daemons that fork themselves run as given; others under start-stop-daemon", () => {
    const base = { name: "x", comm: "x", pidFile: "/run/x.pid" };
    expect(launchArgv({ ...base, argv: ["/usr/lib/frr/zebra", "-d"], launch: "forks" })).toEqual(["/usr/lib/frr/zebra", "-d"]);
    expect(launchArgv({ ...base, argv: ["/usr/sbin/kea-dhcp4", "-c", "k"], launch: "foreground", writesPidFile: true })).toEqual([
      "start-stop-daemon",
      "--start",
      "--background",
      "--pidfile",
      "/run/x.pid",
      "--exec",
      "/usr/sbin/kea-dhcp4",
      "--",
      "-c",
      "k",
    ]);
    expect(() => launchArgv({ ...base, argv: ["kea"], launch: "foreground" })).toThrow(/absolute/);
  });

  it("sends TERM, then KILL after the grace time, through the runner", async () => {
    const dir = await tempDirs("sup-fake");
    try {
      const fake = new FakeRunner();
      const procs = new FakeProcesses(fake);
      const spec: DaemonSpec = {
        name: "d",
        comm: "d",
        argv: ["/bin/d"],
        pidFile: join(dir.root, "d.pid"),
        launch: "forks",
        stopTimeoutMs: 100,
      };
      procs.daemon(/^\/bin\/d$/, "d", () => spec.pidFile);
      const pid = await startDaemon(fake, spec);
      fake.on(/^kill -s TERM/, {});
      await stopDaemon(fake, spec);
      expect(fake.lines().filter((l) => l.startsWith("kill"))).toEqual([`kill -s TERM ${pid}`, `kill -s KILL ${pid}`]);
    } finally {
      await dir.remove();
    }
  });
});
