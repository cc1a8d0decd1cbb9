/**
 * The launcher's part of agent upgrades (docs/upgrades.md), plain JavaScript beside bin/tern-agent: it is the
 * code of the INSTALLED agent (the Debian package's /usr/lib/tern-agent/bin, or the repository's), which an
 * upgrade never replaces, so a new version that crashes at start cannot take the rollback down with it.
 *
 * - chooseEntry(stateDir): the bundle to run: <state>/versions/current/dist/cli.js when an upgrade installed
 *   one, else null (the launcher's own ../dist). A pending upgrade whose deadline passed is rolled back first
 *   (the guard did not get to it: a reboot, a killed guard).
 * - guard(stateDir): the detached process the old agent starts after `upgrade-install`. It waits for the old
 *   agent to exit, starts the new version itself when no service manager does (relaunch in the marker), then
 *   watches the marker: `committed` (the new version says it is healthy) ends it; the new version exiting, or
 *   the deadline passing, rolls back: `current` goes back, the new agent is stopped and the previous one
 *   started (by the guard, or by the service manager's restart).
 *
 * The marker (<state>/upgrade/marker.json) is written by the agent (src/upgrade/marker.ts, the same shape).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

const POLL_MS = 250;

export const versionsDir = (stateDir) => path.join(stateDir, "versions");
export const currentLink = (stateDir) => path.join(versionsDir(stateDir), "current");
export const markerFile = (stateDir) => path.join(stateDir, "upgrade", "marker.json");

/** The state directory as the agent will take it: --state-dir, then TERN_AGENT_STATE_DIR, then the default. */
export function stateDirOf(argv, env) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--state-dir" && argv[i + 1]) return argv[i + 1];
    if (argv[i].startsWith("--state-dir=")) return argv[i].slice("--state-dir=".length);
  }
  return env.TERN_AGENT_STATE_DIR || "/var/lib/tern-agent";
}

export function readMarker(stateDir) {
  try {
    return JSON.parse(readFileSync(markerFile(stateDir), "utf8"));
  } catch {
    return null;
  }
}

function writeJsonAtomic(file, value) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Points `current` at `version` (a directory of versions/), or removes it (null: the launcher's own bundle). */
export function setCurrent(stateDir, version) {
  const link = currentLink(stateDir);
  if (version === null) {
    try {
      unlinkSync(link);
    } catch {}
    return;
  }
  mkdirSync(versionsDir(stateDir), { recursive: true });
  const tmp = `${link}.${randomBytes(4).toString("hex")}.tmp`;
  symlinkSync(version, tmp);
  renameSync(tmp, link);
}

/** The version `current` points at, or null. */
export function currentVersion(stateDir) {
  try {
    return readlinkSync(currentLink(stateDir));
  } catch {
    return null;
  }
}

/** Restores the previous version and records why; returns the marker as written. */
export function rollBack(stateDir, marker, detail) {
  setCurrent(stateDir, marker.previous ?? null);
  const done = { ...marker, state: "rolled-back", detail, at: new Date().toISOString() };
  writeJsonAtomic(markerFile(stateDir), done);
  return done;
}

/** The bundle entry to import, after rolling back an overdue upgrade; null: the launcher's own. */
export function chooseEntry(stateDir) {
  const marker = readMarker(stateDir);
  if (marker?.state === "pending" && Date.now() > marker.deadline)
    rollBack(stateDir, marker, `version ${marker.to} was not healthy within ${marker.healthTimeoutSec} s (found at start)`);
  const version = currentVersion(stateDir);
  if (!version) return null;
  const entry = path.join(versionsDir(stateDir), version, "dist", "cli.js");
  return existsSync(entry) ? entry : null;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitGone(pid, ms) {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await sleep(50);
  return !alive(pid);
}

/** SIGTERM (the agent stops and leaves the router as it is), SIGKILL after 20 s. */
async function stop(pid) {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {}
  if (!(await waitGone(pid, 20_000)))
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  await waitGone(pid, 5000);
}

function relaunch(marker) {
  const [cmd, ...args] = marker.relaunch;
  const child = spawn(cmd, args, { cwd: marker.cwd, detached: true, stdio: "inherit", env: process.env });
  return child;
}

const lockHolder = (marker) => {
  try {
    return Number.parseInt(readFileSync(marker.lockFile, "utf8"), 10) || null;
  } catch {
    return null;
  }
};

/** The guard's whole life (see the file's comment). Logs to the agent's stderr (inherited). */
export async function guard(stateDir) {
  const log = (m) => process.stderr.write(`tern-agent upgrade guard: ${m}\n`);
  let marker = readMarker(stateDir);
  if (marker?.state !== "pending") return 0;
  if (marker.oldPid && !(await waitGone(marker.oldPid, 30_000))) await stop(marker.oldPid);
  let child = null;
  let exited = null;
  if (marker.relaunch) {
    child = relaunch(marker);
    child.on("exit", (code, signal) => {
      exited = signal ? `signal ${signal}` : `code ${code}`;
    });
    log(`started version ${marker.to} (pid ${child.pid})`);
  }
  for (;;) {
    await sleep(POLL_MS);
    marker = readMarker(stateDir) ?? marker;
    if (marker.state === "committed") {
      log(`version ${marker.to} is healthy: upgrade committed`);
      child?.unref();
      return 0;
    }
    if (marker.state !== "pending") return 0;
    const why = exited
      ? `version ${marker.to} exited (${exited}) before it was healthy`
      : Date.now() > marker.deadline
        ? `version ${marker.to} was not healthy within ${marker.healthTimeoutSec} s`
        : null;
    if (!why) continue;
    log(`${why}: rolling back to ${marker.from}`);
    rollBack(stateDir, marker, why);
    if (child) await stop(child.pid);
    else await stop(lockHolder(marker));
    if (marker.relaunch) {
      const back = relaunch(marker);
      back.unref();
      log(`started version ${marker.from} again (pid ${back.pid})`);
    }
    return 0;
  }
}
