/**
 * Retention under <state>/versions (docs/upgrades.md#retention). Every upgrade unpacks a version beside the
 * running one; without this, a router upgraded monthly would fill its disk.
 *
 * - pruneVersions: once an upgrade is committed (and at start when no upgrade is pending), every version
 *   directory goes except the one `current` points at (the running one) and the marker's `previous` (where a
 *   rollback returns to). A pending marker's `to` and `previous` are never removed.
 * - removeUnpackLeftovers: at start, what a crash mid-upgrade left behind: a partial unpack
 *   (<version>.unpacking), a half-received package (upgrade/incoming.tar.gz, useless once the receiver's
 *   in-memory state is gone) and temporary `current` links.
 *
 * Removal failures are logged and never thrown: a full or read-only disk must not stop the agent.
 */
import { lstat, readdir, readlink, rm } from "node:fs/promises";
import { join } from "node:path";
import { readMarker, type UpgradeMarker, upgradeDir, versionsPath } from "./marker.ts";
import { withVersionsLock } from "./versions-lock.ts";

export interface PruneLog {
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
}

/** The link naming the running version, and the suffix of a partial unpack (both written by receiver.ts). */
export const CURRENT_LINK = "current";
export const UNPACKING_SUFFIX = ".unpacking";

/** The version directories that must stay: `current`'s target, the rollback target, a pending upgrade's. */
export function versionsToKeep(current: string | null, marker: UpgradeMarker | null): Set<string> {
  const keep = new Set<string>();
  if (current) keep.add(current);
  if (marker?.previous) keep.add(marker.previous);
  if (marker?.state === "pending") keep.add(marker.to);
  return keep;
}

/** Names an interrupted install (receiver.ts) or `current` switch (bin/upgrade-launch.mjs) leaves behind. */
const isLeftover = (name: string) =>
  name.endsWith(UNPACKING_SUFFIX) || name === `${CURRENT_LINK}.next` || /^current\.[0-9a-f]+\.tmp$/.test(name);

async function keptNow(stateDir: string): Promise<Set<string>> {
  const current = await readlink(join(versionsPath(stateDir), CURRENT_LINK)).catch(() => null);
  return versionsToKeep(current, await readMarker(stateDir));
}

async function entries(dir: string, log: PruneLog): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") log.warn("cannot list agent versions", { dir, error: String(err) });
    return [];
  }
}

async function remove(path: string, what: string, log: PruneLog): Promise<boolean> {
  try {
    await rm(path, { recursive: true, force: true });
    return true;
  } catch (err) {
    log.warn(`cannot remove ${what}`, { path, error: String(err) });
    return false;
  }
}

/**
 * Removes every directory under versions/ but the ones versionsToKeep names, reading `current` and the marker
 * from disk at that moment (a partial unpack goes too: no install runs while the lock is held). Symbolic links
 * stay. Returns the names removed.
 */
export function pruneVersions(stateDir: string, log: PruneLog): Promise<string[]> {
  return withVersionsLock(async () => {
    const dir = versionsPath(stateDir);
    const keep = await keptNow(stateDir);
    const removed: string[] = [];
    for (const name of await entries(dir, log)) {
      if (keep.has(name)) continue;
      const info = await lstat(join(dir, name)).catch(() => null);
      if (!info?.isDirectory()) continue;
      if (await remove(join(dir, name), "an old agent version", log)) removed.push(name);
    }
    if (removed.length > 0) log.info("old agent versions removed", { removed, kept: [...keep] });
    return removed;
  });
}

/**
 * At start (no install can be running yet): removes what an interrupted upgrade left, except a name
 * versionsToKeep holds (a version may itself end in `.unpacking`). Returns the paths removed.
 */
export function removeUnpackLeftovers(stateDir: string, log: PruneLog): Promise<string[]> {
  return withVersionsLock(async () => {
    const dir = versionsPath(stateDir);
    const keep = await keptNow(stateDir);
    const leftovers = (await entries(dir, log))
      .filter((name) => isLeftover(name) && !keep.has(name))
      .map((name) => join(dir, name));
    const incoming = join(upgradeDir(stateDir), "incoming.tar.gz");
    if (await lstat(incoming).catch(() => null)) leftovers.push(incoming);
    const removed: string[] = [];
    for (const path of leftovers) if (await remove(path, "a leftover of an interrupted upgrade", log)) removed.push(path);
    if (removed.length > 0) log.info("leftovers of an interrupted upgrade removed", { removed });
    return removed;
  });
}
