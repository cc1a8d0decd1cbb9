/**
 * `GET /devices/{id}/logs`: the last lines of the agent's log, filtered by
 * level, read by the agent (`log-read`) and answered in one message within
 * MAX_MESSAGE_BYTES (the agent caps it and says `truncated`). Audited: the
 * log shows addresses, names and errors of the router. Recorded as a job
 * (type `logs`) when it ended: its result says how many lines came back, not
 * the lines (a job list is no place for a router's log).
 */
import { randomUUID } from "node:crypto";
import type { AgentLogLevel, JobError, LogReadResult } from "@tern/protocol";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";
import { recordFinishedJob } from "../finished-job.ts";
import { auditDeviceRequest } from "./audit-device-request.ts";
import { jobError } from "./run-diagnostic.ts";

/** The agent reads at most a few MiB backwards; this is plenty on a loaded router. */
const LOG_READ_TIMEOUT_MS = 15_000;

export interface DeviceLogs extends LogReadResult {
  deviceId: string;
  level: AgentLogLevel;
  /** The job that records this read. */
  jobId: string;
}

export async function readDeviceLogs(
  ctx: ServiceCtx,
  deps: Pick<AppDeps, "deviceLink">,
  deviceId: string,
  query: { lines: number; level: AgentLogLevel },
): Promise<DeviceLogs> {
  const jobId = randomUUID();
  const started = new Date();
  await auditDeviceRequest(ctx, deviceId, { action: "read-logs", after: { ...query, jobId } });
  const record = (result: unknown, error: JobError | null) =>
    recordFinishedJob(ctx, {
      id: jobId,
      deviceId,
      type: "logs",
      tasks: [{ kind: "logs", summary: `read the agent's log: last ${query.lines} lines, ${query.level} and above` }],
      started,
      result,
      error,
    });
  let answer: Awaited<ReturnType<typeof deps.deviceLink.requestFromDevice<"log-read">>>;
  try {
    answer = await deps.deviceLink.requestFromDevice(deviceId, "log-read", query, LOG_READ_TIMEOUT_MS);
  } catch (err) {
    await record(null, jobError(err));
    throw err;
  }
  if (!answer.ok) {
    await record(null, { reason: "device", message: answer.error, drivers: [] });
    throw new ApiError("DEVICE_REQUEST_FAILED", `the device could not read its log: ${answer.error}`);
  }
  const { lines, truncated, file } = answer.result;
  await record({ level: query.level, lines: lines.length, truncated, file }, null);
  return { deviceId, level: query.level, jobId, ...answer.result };
}
