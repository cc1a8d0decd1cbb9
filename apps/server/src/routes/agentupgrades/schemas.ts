import { AgentVersionCount, Rollout, RolloutCreate, RolloutReport } from "@tern/protocol";
import type { RouteAuthorization } from "../../auth/authorize.ts";

export const RolloutSchema = Rollout.meta({ id: "AgentRollout" });
export const RolloutCreateSchema = RolloutCreate.meta({ id: "AgentRolloutCreate" });
export const RolloutReportSchema = RolloutReport.meta({ id: "AgentRolloutReport" });
export const AgentVersionCountSchema = AgentVersionCount.meta({ id: "AgentVersionCount" });

/** Rollouts act on the organization's devices: reading needs the devices read bit, acting the devices post bit. */
export const ROLLOUT_AUTH: RouteAuthorization = { resource: "devices" };
/** Pause, resume and cancel are POSTs that change a rollout: the same bit as creating one. */
export const ROLLOUT_ACT_AUTH: RouteAuthorization = { resource: "devices", permission: "post" };
