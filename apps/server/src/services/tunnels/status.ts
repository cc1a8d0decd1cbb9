/**
 * The one derivation of a tunnel's status from facts about its ends. Pure, so
 * the REST reads (now) and the device gateway (issue 5, with live reports)
 * share it; `status-sql.ts` mirrors it in SQL for filtering and sorting
 * and a test proves the two agree on every combination of facts.
 *
 * Rules, in order:
 *  - An end is **pending** when the tunnel is not in its desired config (the
 *    compiler left it out), when its device has never connected, or when its
 *    device has a config job in flight or its newest job failed. The reasons
 *    of both ends are joined into `pendingReason`.
 *  - `tunnelStatus`: Pending when any end is pending; Connected when every
 *    reporting end reports the tunnel up; Not Connected otherwise (configured
 *    but down, or not reported yet).
 *  - `status` (overall): N/A when a device end is not connected now, else
 *    `tunnelStatus`.
 * A peer does not report: a peer tunnel has one device end (A), its status
 * follows A's report and `tunnelStatusB` stays `unknown`.
 */
import type { TunnelOverallStatus, TunnelStatus } from "@tern/protocol";

export const CONNECTIONS = ["never", "connected", "disconnected"] as const;
/** The device's link to the server (`devices.connection`). */
export type EndConnection = (typeof CONNECTIONS)[number];

export const CONFIG_STATES = ["applied", "in-flight", "failed"] as const;
/**
 * The device's config jobs: `in-flight` while one is queued or running,
 * `failed` when its newest job failed, else `applied` (or nothing to apply).
 */
export type EndConfigState = (typeof CONFIG_STATES)[number];

export const REPORTS = ["up", "down", "unknown"] as const;
/** What the device last reported about this tunnel (issue 5 feeds it; `unknown` until then). */
export type EndReport = (typeof REPORTS)[number];

export interface TunnelEndFacts {
  deviceName: string;
  connection: EndConnection;
  /** The tunnel is in the device's desired config (the compiler did not leave it out). */
  configured: boolean;
  config: EndConfigState;
  reported: EndReport;
}

export interface TunnelStatusFacts {
  a: TunnelEndFacts;
  /** Null for a peer tunnel. */
  b: TunnelEndFacts | null;
}

export interface TunnelStatusResult {
  tunnelStatus: TunnelStatus;
  status: TunnelOverallStatus;
  tunnelStatusA: EndReport;
  tunnelStatusB: EndReport;
  isPending: boolean;
  pendingReason: string;
}

/** Why one end holds the tunnel back, or null. One reason per end: the first that applies. */
export function endPendingReason(end: TunnelEndFacts): string | null {
  if (!end.configured)
    return `device ${end.deviceName} cannot configure the tunnel yet (an end without an address, or not an assigned WAN interface)`;
  if (end.connection === "never") return `waiting for device ${end.deviceName} to connect`;
  if (end.config === "in-flight") return `waiting for device ${end.deviceName} to apply configuration`;
  if (end.config === "failed")
    return `waiting for device ${end.deviceName} to apply configuration (its last configuration job failed)`;
  return null;
}

export function deriveTunnelStatus(facts: TunnelStatusFacts): TunnelStatusResult {
  const ends = facts.b ? [facts.a, facts.b] : [facts.a];
  const reasons = ends.map(endPendingReason).filter((r): r is string => r !== null);
  const isPending = reasons.length > 0;
  const tunnelStatus: TunnelStatus = isPending
    ? "Pending"
    : ends.every((e) => e.reported === "up")
      ? "Connected"
      : "Not Connected";
  const status: TunnelOverallStatus = ends.some((e) => e.connection !== "connected") ? "N/A" : tunnelStatus;
  return {
    tunnelStatus,
    status,
    tunnelStatusA: facts.a.reported,
    tunnelStatusB: facts.b ? facts.b.reported : "unknown",
    isPending,
    pendingReason: reasons.join("; "),
  };
}
