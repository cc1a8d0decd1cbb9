/**
 * The "New rollout" form: its state, the request it makes (POST
 * /api/agent-upgrades, the protocol's RolloutCreate) and the API's refusal
 * spread over its fields (400 details[].path, e.g. "window.start" → window).
 * Targets are chosen as the devices page and the fleet-wide acts choose them:
 * every device, device tags (the selection's `tags` key, any of them), an
 * agent version (`versions.agent`), or devices by name (ids).
 */
import { type Schemas, TernApiError } from "@tern/client";

export type TargetKind = "all" | "tags" | "version" | "devices";

export interface RolloutFormState {
  package: string | null;
  targetKind: TargetKind;
  tags: string[];
  version: string | null;
  deviceIds: string[];
  /** A daily maintenance window (UTC) or any time. */
  windowOn: boolean;
  windowStart: string;
  windowEnd: string;
  /** NumberInput values: "" when emptied (the API's default then applies). */
  canaryPercent: number | string;
  batchSize: number | string;
  healthTimeoutSec: number | string;
}

/** The API's defaults (RolloutCreate). */
export const ROLLOUT_DEFAULTS: RolloutFormState = {
  package: null,
  targetKind: "tags",
  tags: [],
  version: null,
  deviceIds: [],
  windowOn: false,
  windowStart: "01:00",
  windowEnd: "05:00",
  canaryPercent: 10,
  batchSize: 10,
  healthTimeoutSec: 300,
};

/** The body of POST /api/agent-upgrades (the protocol's RolloutCreate, as the client types it). */
export type RolloutRequest = Schemas["AgentRolloutCreate"];

export function rolloutTarget(f: RolloutFormState): RolloutRequest["target"] {
  switch (f.targetKind) {
    case "all":
      return { filter: [] };
    case "tags":
      return { filter: [{ key: "tags", op: "in", val: f.tags }] };
    case "version":
      return { filter: [{ key: "versions.agent", op: "==", val: f.version ?? "" }] };
    case "devices":
      return { deviceIds: f.deviceIds };
  }
}

const numberOrDefault = (value: number | string): number | undefined =>
  value === "" ? undefined : typeof value === "number" ? value : Number(value);

/** The body of POST /api/agent-upgrades; the API checks every value (its refusal lands on the fields). */
export function rolloutRequest(f: RolloutFormState): RolloutRequest {
  const body: RolloutRequest = { package: f.package ?? "", target: rolloutTarget(f) };
  if (f.windowOn) body.window = { start: f.windowStart.trim(), end: f.windowEnd.trim() };
  for (const key of ["canaryPercent", "batchSize", "healthTimeoutSec"] as const) {
    const value = numberOrDefault(f[key]);
    if (value !== undefined) body[key] = value;
  }
  return body;
}

export type RolloutField =
  | "package"
  | "target"
  | "windowStart"
  | "windowEnd"
  | "canaryPercent"
  | "batchSize"
  | "healthTimeoutSec";

/** The field a detail's path lands on: by its first segment, the window's by its second. */
function fieldOf(path: string): RolloutField | null {
  const [head = "", next] = path.split(".");
  if (head === "window") return next === "end" ? "windowEnd" : "windowStart";
  return ["package", "target", "canaryPercent", "batchSize", "healthTimeoutSec"].includes(head) ? (head as RolloutField) : null;
}

/**
 * The API's error on the fields it names, each with the machine code; `rest`
 * says whether something is left for the form's own alert (no detail, a detail
 * no field takes, or another kind of error).
 */
export function rolloutFieldErrors(error: unknown): { fields: Partial<Record<RolloutField, string>>; rest: boolean } {
  const fields: Partial<Record<RolloutField, string>> = {};
  if (error === null || error === undefined) return { fields, rest: false };
  if (!(error instanceof TernApiError)) return { fields, rest: true };
  let rest = error.details.length === 0;
  for (const detail of error.details) {
    const field = fieldOf(detail.path);
    if (!field) {
      rest = true;
      continue;
    }
    const text = `${detail.message} (${error.code})`;
    fields[field] = fields[field] ? `${fields[field]}; ${text}` : text;
  }
  return { fields, rest };
}
