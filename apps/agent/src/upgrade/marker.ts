/**
 * The upgrade marker (<state>/upgrade/marker.json): what the launcher's guard (bin/upgrade-launch.mjs, which
 * reads the same shape) and the agents of both versions share about the last upgrade.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { UpgradeReport } from "@tern/protocol";
import { writeFileAtomic } from "../fs.ts";

export interface UpgradeMarker {
  upgradeId: string;
  from: string;
  to: string;
  state: "pending" | "committed" | "rolled-back";
  /** The versions/ directory `current` pointed at before; null: the launcher's own bundle. */
  previous: string | null;
  /** Epoch ms: not committed by then, the guard (or the launcher at start) rolls back. */
  deadline: number;
  healthTimeoutSec: number;
  /** Tunnels that were up before the upgrade: the new version must see them up again. */
  tunnelsUp: string[];
  /** The old version had a config applied: the new one must have one applied too. */
  hadConfig: boolean;
  oldPid: number;
  /** The pid lock of `run` (the guard stops its holder when a service manager restarts the agent). */
  lockFile: string;
  /** argv to start the agent again when no service manager does; null under systemd (it restarts the agent). */
  relaunch: string[] | null;
  cwd: string;
  detail?: string;
  at?: string;
}

export const upgradeDir = (stateDir: string) => join(stateDir, "upgrade");
export const markerPath = (stateDir: string) => join(upgradeDir(stateDir), "marker.json");
export const versionsPath = (stateDir: string) => join(stateDir, "versions");

export async function readMarker(stateDir: string): Promise<UpgradeMarker | null> {
  try {
    return JSON.parse(await readFile(markerPath(stateDir), "utf8")) as UpgradeMarker;
  } catch {
    return null;
  }
}

export async function writeMarker(stateDir: string, marker: UpgradeMarker): Promise<void> {
  await writeFileAtomic(markerPath(stateDir), `${JSON.stringify(marker, null, 2)}\n`, 0o600);
}

/** The report the agent repeats in its status once the upgrade ended (committed or rolled back). */
export function reportOf(marker: UpgradeMarker | null): UpgradeReport | undefined {
  if (!marker || marker.state === "pending") return undefined;
  return {
    upgradeId: marker.upgradeId,
    from: marker.from.slice(0, 50),
    to: marker.to.slice(0, 50),
    outcome: marker.state,
    ...(marker.detail ? { detail: marker.detail.slice(0, 1000) } : {}),
    at: marker.at ?? new Date().toISOString(),
  };
}
