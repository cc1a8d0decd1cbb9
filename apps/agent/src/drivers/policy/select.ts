/**
 * Path choice for one rule (pure; the clock is passed in).
 *
 * A link is eligible when it is measured up and its window loss, mean RTT and
 * jitter are within the rule's thresholds (`priority` order: up is enough).
 * A link not measured yet counts as eligible, so a starting agent does not
 * drop or detour traffic before its first probes.
 * - The current link is left at once when it stops being eligible.
 * - Traffic moves back to a link earlier in the order only after that link
 *   has been eligible without a break for `holdDownSeconds` (hysteresis).
 * - When the current link fails and no link has served its hold-down yet, the
 *   earliest eligible link is taken at once rather than falling back.
 * - No eligible link: the rule's fallback (null).
 * - Healing (docs/healing.md): a link held down by flap damping is not
 *   eligible; a link the server found degraded against its baseline
 *   (`avoid`) is eligible only when no other link is.
 * - `blocked` (the kernel's word, ./kernel-gate.ts) makes a link ineligible
 *   whatever its measurements say.
 */
import type { LinkQualityThresholds } from "@tern/protocol";
import type { LinkQuality } from "../../probes/types.ts";
import type { PolicyLink } from "./links.ts";

export interface SelectionState {
  current: string | null;
  /** When each link became eligible (ms, monotonic), absent when it is not. */
  eligibleSince: Map<string, number>;
  /** Why the last choice was made, for logs and notifications. */
  reason: string;
}

export const newSelectionState = (): SelectionState => ({ current: null, eligibleSince: new Map(), reason: "" });

export function eligible(q: LinkQuality | null, thresholds: LinkQualityThresholds | null): { ok: boolean; why: string } {
  if (!q || q.samples === 0) return { ok: true, why: "not measured yet" };
  if (!q.up) return { ok: false, why: "down" };
  if (!thresholds) return { ok: true, why: "up" };
  if (q.lossPercent > thresholds.maxLossPercent)
    return { ok: false, why: `loss ${q.lossPercent}% > ${thresholds.maxLossPercent}%` };
  if (q.rttMs > thresholds.maxLatencyMs) return { ok: false, why: `rtt ${q.rttMs} ms > ${thresholds.maxLatencyMs} ms` };
  if (q.jitterMs > thresholds.maxJitterMs) return { ok: false, why: `jitter ${q.jitterMs} ms > ${thresholds.maxJitterMs} ms` };
  return { ok: true, why: `loss ${q.lossPercent}%, rtt ${q.rttMs} ms, jitter ${q.jitterMs} ms` };
}

/** What healing adds to the choice: links held down by flap damping (with why), links to avoid when possible. */
export interface SelectionHealing {
  heldDown(key: string): string | null;
  avoid: ReadonlySet<string>;
}

export const NO_HEALING: SelectionHealing = { heldDown: () => null, avoid: new Set() };

/** Updates `state` for the time `now` and returns the chosen link key (null = fallback). */
export function selectLink(
  state: SelectionState,
  links: readonly PolicyLink[],
  quality: (key: string) => LinkQuality | null,
  thresholds: LinkQualityThresholds | null,
  now: number,
  healing: SelectionHealing = NO_HEALING,
  blocked: (link: PolicyLink) => string | null = () => null,
): string | null {
  const holdMs = (thresholds?.holdDownSeconds ?? 0) * 1000;
  const why = new Map<string, string>();
  const ok = new Map<string, boolean>();
  for (const l of links) {
    const b = blocked(l);
    const e = b ? { ok: false, why: b } : eligible(quality(l.key), thresholds);
    const held = e.ok ? healing.heldDown(l.key) : null;
    ok.set(l.key, e.ok && held === null);
    why.set(l.key, held ?? e.why);
  }
  const avoided = (k: string) => healing.avoid.has(k) && ok.get(k) === true;
  if (links.some((l) => ok.get(l.key) && !healing.avoid.has(l.key)))
    for (const l of links)
      if (avoided(l.key)) {
        ok.set(l.key, false);
        why.set(l.key, "avoided: degraded against its baseline");
      }
  for (const l of links) {
    if (!ok.get(l.key)) state.eligibleSince.delete(l.key);
    else if (!state.eligibleSince.has(l.key)) state.eligibleSince.set(l.key, now);
  }
  for (const k of state.eligibleSince.keys()) if (!links.some((l) => l.key === k)) state.eligibleSince.delete(k);

  const isEligible = (k: string) => state.eligibleSince.has(k);
  const served = (k: string) => isEligible(k) && now - state.eligibleSince.get(k)! >= holdMs;
  const currentIndex = links.findIndex((l) => l.key === state.current);

  let choice: string | null;
  if (currentIndex >= 0 && isEligible(state.current!)) {
    const better = links.slice(0, currentIndex).find((l) => served(l.key));
    choice = better ? better.key : state.current;
  } else {
    choice = links.find((l) => served(l.key))?.key ?? links.find((l) => isEligible(l.key))?.key ?? null;
  }
  if (choice !== state.current || state.reason === "") {
    const from = state.current ? `${state.current} (${why.get(state.current) ?? "removed"})` : "none";
    state.reason = `${from} → ${choice ? `${choice} (${why.get(choice)})` : "fallback (no eligible link)"}`;
  }
  state.current = choice;
  return choice;
}
