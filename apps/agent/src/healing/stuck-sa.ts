/**
 * What to do about a tunnel whose probes stopped being answered (pure): look
 * at its SAs in charon and pick the repair, with an exponential back-off per
 * tunnel so a far end that is simply unreachable is not hammered.
 * - IKE SA established, no CHILD_SA installed (e.g. `swanctl --terminate
 *   --child` on this or the far side): initiate the CHILD_SA again within the
 *   IKE SA. The initiator does it at once; the responder waits RESPONDER_GRACE_MS
 *   longer so both ends do not create one each.
 * - CHILD_SA installed but passing no probes for STUCK_AFTER_MS (the far end
 *   lost it, or its kernel state is gone): terminate the CHILD_SA and
 *   initiate it again.
 * - No IKE SA: nothing here (the IKEv2 driver's heal() and charon's own
 *   retries re-establish it).
 */
import type { TunnelSaState } from "../drivers/ikev2/sas.ts";

export const STUCK_AFTER_MS = 3000;
export const RESPONDER_GRACE_MS = 5000;
export const BACKOFF_FIRST_MS = 5000;
export const BACKOFF_MAX_MS = 300_000;

export type SaRepair = { kind: "initiate" | "restart"; why: string } | null;

export interface SaHealState {
  /** When the tunnel was last repaired and the back-off in force after it. */
  lastAt: number | null;
  backoffMs: number;
  attempts: number;
}

export const newSaHealState = (): SaHealState => ({ lastAt: null, backoffMs: BACKOFF_FIRST_MS, attempts: 0 });

/**
 * The repair a tunnel needs now, or null. `silentMs`: how long its probes
 * have gone unanswered (null: never answered since probing started).
 */
export function saRepair(
  sa: Pick<TunnelSaState, "ikeSas">,
  initiator: boolean,
  silentMs: number | null,
  state: SaHealState,
  now: number,
): SaRepair {
  if (silentMs === null || silentMs < STUCK_AFTER_MS) return null;
  if (state.lastAt !== null && now - state.lastAt < state.backoffMs) return null;
  const ike = sa.ikeSas.find((s) => s.state === "ESTABLISHED");
  if (!ike) return null;
  const installed = ike.children.some((c) => c.state === "INSTALLED");
  if (!installed) {
    if (!initiator && silentMs < STUCK_AFTER_MS + RESPONDER_GRACE_MS) return null;
    return {
      kind: "initiate",
      why: `IKE SA established without an installed CHILD_SA, probes silent ${Math.round(silentMs)} ms`,
    };
  }
  return { kind: "restart", why: `CHILD_SA installed but passing no probes for ${Math.round(silentMs)} ms` };
}

/** After a repair: the next one waits twice as long, up to BACKOFF_MAX_MS. */
export function repaired(state: SaHealState, now: number): SaHealState {
  return {
    lastAt: now,
    backoffMs: state.lastAt === null ? BACKOFF_FIRST_MS : Math.min(state.backoffMs * 2, BACKOFF_MAX_MS),
    attempts: state.attempts + 1,
  };
}
