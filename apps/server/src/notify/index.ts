export { type Observed, observe, thresholdLevel } from "./conditions.ts";
export { NotificationEngine, type NotificationEngineOptions } from "./engine.ts";
export { evaluateStatus, type Observation, STATUS_EVENTS } from "./evaluate-status.ts";
