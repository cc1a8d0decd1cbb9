/**
 * `GET /devices/{id}/logs`: the last lines of the agent's log, filtered by
 * level, read by the agent (`log-read`) and answered in one message within
 * MAX_MESSAGE_BYTES (the agent caps it and says `truncated`). Audited: the
 * log shows addresses, names and errors of the router.
 */
import type { AgentLogLevel, LogReadResult } from "@tern/protocol";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";
import { auditDeviceRequest } from "./audit-device-request.ts";

/** The agent reads at most a few MiB backwards; this is plenty on a loaded router. */
const LOG_READ_TIMEOUT_MS = 15_000;

export interface DeviceLogs extends LogReadResult {
  deviceId: string;
  level: AgentLogLevel;
}

export async function readDeviceLogs(
  ctx: ServiceCtx,
  deps: Pick<AppDeps, "deviceLink">,
  deviceId: string,
  query: { lines: number; level: AgentLogLevel },
): Promise<DeviceLogs> {
  await auditDeviceRequest(ctx, deviceId, { action: "read-logs", after: query });
  const answer = await deps.deviceLink.requestFromDevice(deviceId, "log-read", query, LOG_READ_TIMEOUT_MS);
  if (!answer.ok) throw new ApiError("DEVICE_REQUEST_FAILED", `the device could not read its log: ${answer.error}`);
  return { deviceId, level: query.level, ...answer.result };
}
