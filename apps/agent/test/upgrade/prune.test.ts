/**
 * Retention under <state>/versions (upgrade/prune.ts) on real temporary directories: after a commit only the
 * running version and the rollback target stay; a pending marker's versions are never removed; a partial unpack
 * and a half-received package are removed at start; a removal that fails is logged, not thrown; a prune waits
 * for an install in progress. The running agent's prune on commit: agent-upgrade.test.ts.
 */
import { execFile } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type UpgradeMarker, upgradeDir, versionsPath, writeMarker } from "../../src/upgrade/marker.ts";
import { pruneVersions, removeUnpackLeftovers } from "../../src/upgrade/prune.ts";
import { withVersionsLock } from "../../src/upgrade/versions-lock.ts";

const UPGRADE_ID = "7d8e2f0a-6b1c-4b8e-9f3a-1c2d3e4f5a6b";
const created: string[] = [];
afterAll(async () => {
  for (const dir of created.splice(0)) await rm(dir, { recursive: true, force: true });
});

interface Logged {
  level: "info" | "warn";
  msg: string;
  data?: Record<string, unknown>;
}
function recordingLog() {
  const lines: Logged[] = [];
  return {
    lines,
    info: (msg: string, data?: Record<string, unknown>) => lines.push({ level: "info", msg, data }),
    warn: (msg: string, data?: Record<string, unknown>) => lines.push({ level: "warn", msg, data }),
  };
}

function marker(stateDir: string, over: Partial<UpgradeMarker>): UpgradeMarker {
  return {
    upgradeId: UPGRADE_ID,
    from: "1.0.0",
    to: "2.0.0",
    state: "committed",
    previous: "1.0.0",
    deadline: Date.now() + 60_000,
    healthTimeoutSec: 60,
    tunnelsUp: [],
    hadConfig: false,
    oldPid: 0,
    lockFile: join(stateDir, "run", "agent.lock"),
    relaunch: null,
    cwd: stateDir,
    ...over,
  };
}

/** A state directory with unpacked versions (each with a bundle) and `current` pointing at one of them. */
async function stateWith(versions: string[], current: string | null, stateDir?: string): Promise<string> {
  const dir = stateDir ?? (await mkdtemp(join(tmpdir(), "tern-prune-")));
  if (!stateDir) created.push(dir);
  for (const v of versions) {
    await mkdir(join(versionsPath(dir), v, "dist"), { recursive: true });
    await writeFile(join(versionsPath(dir), v, "dist", "cli.js"), `// agent ${v}\n`);
  }
  await mkdir(versionsPath(dir), { recursive: true });
  if (current) await symlink(current, join(versionsPath(dir), "current"));
  return dir;
}

const listed = async (stateDir: string) => (await readdir(versionsPath(stateDir))).sort();
const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

describe("pruneVersions", () => {
  it("after a commit keeps the running version and the rollback target only", async () => {
    const stateDir = await stateWith(["0.8.0", "0.9.0", "1.0.0", "2.0.0"], "2.0.0");
    await writeMarker(stateDir, marker(stateDir, { state: "committed", previous: "1.0.0", to: "2.0.0" }));
    const log = recordingLog();
    expect((await pruneVersions(stateDir, log)).sort()).toEqual(["0.8.0", "0.9.0"]);
    expect(await listed(stateDir)).toEqual(["1.0.0", "2.0.0", "current"]);
    expect(log.lines).toMatchObject([{ level: "info", data: { removed: ["0.8.0", "0.9.0"] } }]);
    // Twice: nothing more to do.
    expect(await pruneVersions(stateDir, log)).toEqual([]);
  });

  it("keeps only the running version when a rollback returns to the launcher's own bundle", async () => {
    const stateDir = await stateWith(["1.5.0", "2.0.0"], "2.0.0");
    await writeMarker(stateDir, marker(stateDir, { previous: null }));
    expect(await pruneVersions(stateDir, recordingLog())).toEqual(["1.5.0"]);
    expect(await listed(stateDir)).toEqual(["2.0.0", "current"]);
  });

  it("never removes a version a pending marker names, even one `current` does not point at", async () => {
    // A newer upgrade (3.0.0, back to 2.0.0 on rollback) is pending while `current` still names 1.0.0.
    const stateDir = await stateWith(["0.9.0", "1.0.0", "2.0.0", "3.0.0"], "1.0.0");
    await writeMarker(stateDir, marker(stateDir, { state: "pending", from: "2.0.0", to: "3.0.0", previous: "2.0.0" }));
    expect(await pruneVersions(stateDir, recordingLog())).toEqual(["0.9.0"]);
    expect(await listed(stateDir)).toEqual(["1.0.0", "2.0.0", "3.0.0", "current"]);
  });

  it("after a rollback the failed version goes and the restored one stays", async () => {
    const stateDir = await stateWith(["1.0.0", "2.0.0"], "1.0.0");
    await writeMarker(stateDir, marker(stateDir, { state: "rolled-back", previous: "1.0.0", to: "2.0.0" }));
    expect(await pruneVersions(stateDir, recordingLog())).toEqual(["2.0.0"]);
    expect(await listed(stateDir)).toEqual(["1.0.0", "current"]);
  });

  it("leaves symbolic links and files alone, and does nothing without a versions directory", async () => {
    const stateDir = await stateWith(["2.0.0"], "2.0.0");
    await writeFile(join(versionsPath(stateDir), "README"), "operator's note\n");
    await symlink("2.0.0", join(versionsPath(stateDir), "stable"));
    expect(await pruneVersions(stateDir, recordingLog())).toEqual([]);
    expect(await listed(stateDir)).toEqual(["2.0.0", "README", "current", "stable"]);
    const empty = await mkdtemp(join(tmpdir(), "tern-prune-empty-"));
    created.push(empty);
    const log = recordingLog();
    expect(await pruneVersions(empty, log)).toEqual([]);
    expect(log.lines).toEqual([]);
  });

  it("logs a removal that fails and goes on with the others", async (ctx) => {
    const stateDir = await stateWith(["0.8.0", "0.9.0", "2.0.0"], "2.0.0");
    await writeMarker(stateDir, marker(stateDir, { previous: null }));
    // An immutable file: even root cannot remove it (ext4/xfs/btrfs; skipped where chattr cannot set it).
    const stuck = join(versionsPath(stateDir), "0.8.0", "dist", "cli.js");
    const chattr = (flag: string) => promisify(execFile)("chattr", [flag, stuck]);
    if (
      !(await chattr("+i").then(
        () => true,
        () => false,
      ))
    )
      ctx.skip("chattr +i is not available here");
    try {
      const log = recordingLog();
      expect(await pruneVersions(stateDir, log)).toEqual(["0.9.0"]);
      expect(log.lines.find((l) => l.level === "warn")).toMatchObject({
        msg: "cannot remove an old agent version",
        data: { path: join(versionsPath(stateDir), "0.8.0") },
      });
      expect(await listed(stateDir)).toEqual(["0.8.0", "2.0.0", "current"]);
    } finally {
      await chattr("-i");
    }
  });

  it("waits for an install in progress: the version it is putting in place survives", async () => {
    const stateDir = await stateWith(["1.0.0"], "1.0.0");
    await writeMarker(stateDir, marker(stateDir, { state: "committed", from: "0.9.0", to: "1.0.0", previous: null }));
    // The install's section (receiver.ts): the version appears first, its pending marker later.
    const install = withVersionsLock(async () => {
      await stateWith(["2.0.0"], null, stateDir);
      await new Promise((r) => setTimeout(r, 50));
      await writeMarker(stateDir, marker(stateDir, { state: "pending", from: "1.0.0", to: "2.0.0", previous: "1.0.0" }));
    });
    const pruned = pruneVersions(stateDir, recordingLog());
    await install;
    expect(await pruned).toEqual([]);
    expect(await listed(stateDir)).toEqual(["1.0.0", "2.0.0", "current"]);
  });
});

describe("removeUnpackLeftovers", () => {
  it("removes a partial unpack, a half-received package and temporary links, nothing else", async () => {
    const stateDir = await stateWith(["1.0.0", "2.0.0", "3.0.0.unpacking"], "2.0.0");
    await writeMarker(stateDir, marker(stateDir, {}));
    await symlink("3.0.0", join(versionsPath(stateDir), "current.next"));
    await symlink("3.0.0", join(versionsPath(stateDir), "current.0a1b2c3d.tmp"));
    await writeFile(join(upgradeDir(stateDir), "incoming.tar.gz"), Buffer.alloc(1000));
    const log = recordingLog();
    const removed = await removeUnpackLeftovers(stateDir, log);
    expect(removed).toHaveLength(4);
    expect(await listed(stateDir)).toEqual(["1.0.0", "2.0.0", "current"]);
    expect(await exists(join(upgradeDir(stateDir), "incoming.tar.gz"))).toBe(false);
    expect(await exists(join(upgradeDir(stateDir), "marker.json"))).toBe(true);
    expect(log.lines).toMatchObject([{ level: "info", msg: "leftovers of an interrupted upgrade removed" }]);
    expect(await removeUnpackLeftovers(stateDir, log)).toEqual([]);
  });

  it("keeps a running version whose name merely ends in .unpacking", async () => {
    const stateDir = await stateWith(["1.0.unpacking"], "1.0.unpacking");
    expect(await removeUnpackLeftovers(stateDir, recordingLog())).toEqual([]);
    expect(await listed(stateDir)).toEqual(["1.0.unpacking", "current"]);
  });
});
