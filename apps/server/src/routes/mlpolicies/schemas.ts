import { z } from "@hono/zod-openapi";
import { Id, MlPolicy, MlPolicyCreate } from "@tern/protocol";
import type { Context } from "hono";
import { acceptedWithJobs } from "../../http/accepted.ts";
import type { AppEnv } from "../../http/env.ts";
import { DEVICE_SELECTION_KEYS, DeviceSelection } from "../../services/devices/selection.ts";

export const MlPolicySchema = MlPolicy.meta({ id: "MlPolicy" });
export const MlPolicyCreateSchema = MlPolicyCreate.meta({ id: "MlPolicyCreate" });
export const MlPolicyChangedSchema = MlPolicy.extend({
  /** Jobs queued for the devices that run the policy. */
  jobIds: z.array(Id),
}).meta({ id: "MlPolicyChanged" });
export const DeviceSelectionSchema = DeviceSelection.meta({ id: "DeviceSelection" });

export const SELECTION_TEXT = `Body: \`deviceIds\` (at most 10,000) or \`filter\` (a JSON array of {key, op, val} over the devices; \`[]\` = every device of the organization). Filter keys: ${DEVICE_SELECTION_KEYS}.`;

/** 202 with the jobs; the Location lists them, or names their job group when there are many (http/accepted.ts). */
export function acceptedFanOut(c: Context<AppEnv>, jobIds: string[]) {
  return acceptedWithJobs(c, jobIds);
}
