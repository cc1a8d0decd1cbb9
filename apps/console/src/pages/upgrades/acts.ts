/** Pause, resume and cancel of a rollout: which a state allows, and their refusals in words. */
import { TernApiError } from "@tern/client";
import { errorText } from "../../api/errors.ts";
import type { Rollout } from "./progress.ts";

export type RolloutAct = "pause" | "resume" | "cancel";

/** Which acts a rollout in this state takes (the API answers 409 ROLLOUT_CONFLICT to the others). */
export function rolloutActs(state: Rollout["state"]): Record<RolloutAct, boolean> {
  return { pause: state === "running", resume: state === "paused", cancel: state === "running" || state === "paused" };
}

/**
 * A refusal as the page says it: ROLLOUT_CONFLICT means the rollout moved on
 * meanwhile (the scheduler paused it on a failed canary, it completed, another
 * member acted), which the API's own message ("a cancelled rollout cannot
 * pause") says tersely.
 */
export function actErrorText(act: RolloutAct, error: unknown): string {
  if (error instanceof TernApiError && error.code === "ROLLOUT_CONFLICT")
    return `The rollout cannot ${act} now: it changed meanwhile (${error.message}). The page shows its current state. (${error.code})`;
  return errorText(error);
}
