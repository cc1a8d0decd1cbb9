/**
 * When a freshly upgraded agent counts as healthy (then it commits the upgrade): connected to the server,
 * a configuration applied if the old version had one (no apply running, the last one not failed), and every
 * tunnel that was up before the upgrade up again. Pure, so it is tested on its own.
 */
import type { UpgradeMarker } from "./marker.ts";

export interface HealthView {
  connected: boolean;
  appliedHash: string | null;
  applying: boolean;
  lastApplyFailed: boolean;
  tunnelsUp: readonly string[];
}

/** Null when healthy; otherwise what is still missing (logged while waiting). */
export function missingForCommit(marker: Pick<UpgradeMarker, "tunnelsUp" | "hadConfig">, v: HealthView): string | null {
  if (!v.connected) return "not connected to the server";
  if (marker.hadConfig && (v.appliedHash === null || v.applying || v.lastApplyFailed)) return "configuration not applied";
  const up = new Set(v.tunnelsUp);
  const down = marker.tunnelsUp.filter((t) => !up.has(t));
  if (down.length > 0) return `tunnels not up again: ${down.join(", ")}`;
  return null;
}
