/**
 * `POST /devices/{id}/diagnostics/{ping|traceroute|dns}`: runs the diagnostic
 * on the device over its link and yields its output lines as they come, then
 * the final result. Who ran what against which target is audited before it
 * runs; the run is recorded as a job (type ping, traceroute or dns) when it
 * ends, with its result, also when it failed or its caller went away.
 *
 * The request must be out on the link (or with the instance holding it)
 * before the caller gets its 200 and the stream: an offline device is a 409
 * DEVICE_NOT_CONNECTED, never a stream that hangs.
 */
import { randomUUID } from "node:crypto";
import {
  type DiagnosticStreamEvent,
  type DnsLookupParams,
  type JobError,
  type PingParams,
  pingTimeLimitMs,
  REQUESTS,
  type TracerouteParams,
  tracerouteTimeLimitMs,
} from "@tern/protocol";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";
import { recordFinishedJob } from "../finished-job.ts";
import { auditDeviceRequest } from "./audit-device-request.ts";
import { EventQueue } from "./event-queue.ts";

/** Beyond the device's own time limit, how long the server waits for the final answer. */
const ANSWER_MARGIN_MS = 5000;

export type DiagnosticInput =
  | { kind: "ping"; params: PingParams }
  | { kind: "traceroute"; params: TracerouteParams }
  | { kind: "dns"; params: DnsLookupParams };

/** One event of the stream (each an SSE `data:` line of JSON): the protocol's, which the client reads. */
export type DiagnosticEvent = DiagnosticStreamEvent;

const METHOD = { ping: "ping", traceroute: "traceroute", dns: "dns-lookup" } as const;

function targetOf(input: DiagnosticInput): string {
  return input.kind === "dns" ? input.params.name : input.params.target;
}

function timeLimitMs(input: DiagnosticInput): number {
  if (input.kind === "ping") return pingTimeLimitMs(input.params);
  if (input.kind === "traceroute") return tracerouteTimeLimitMs(input.params);
  return input.params.timeoutMs;
}

/** What the job's task says ran: "ping 192.0.2.1 (count 4, interval 1000 ms)". */
function summary(input: DiagnosticInput): string {
  const { target: _t, name: _n, ...options } = input.params as Record<string, unknown>;
  const text = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(", ");
  return `${input.kind} ${targetOf(input)}${text ? ` (${text})` : ""}`;
}

/** An older agent sends no progress: the lines of its final output stand in for them. */
function outputLines(result: unknown): string[] {
  const output = (result as { output?: unknown }).output;
  return typeof output === "string" ? output.split("\n").filter((l) => l !== "") : [];
}

export interface DiagnosticRun {
  jobId: string;
  events: AsyncGenerator<DiagnosticEvent>;
  /** Settles once the job is recorded (tests). */
  done: Promise<void>;
}

export async function runDiagnostic(
  ctx: ServiceCtx,
  deps: Pick<AppDeps, "deviceLink">,
  deviceId: string,
  input: DiagnosticInput,
  signal: AbortSignal,
): Promise<DiagnosticRun> {
  const jobId = randomUUID();
  const target = targetOf(input);
  const started = new Date();
  await auditDeviceRequest(ctx, deviceId, { action: input.kind, after: { jobId, target, params: input.params } });

  const queue = new EventQueue<DiagnosticEvent>();
  queue.push({ type: "started", jobId, deviceId, kind: input.kind, target });
  let sawLines = false;
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const answer = deps.deviceLink.requestFromDevice(
    deviceId,
    METHOD[input.kind],
    input.params as never,
    timeLimitMs(input) + ANSWER_MARGIN_MS,
    {
      signal,
      onSent: markSent,
      onProgress: (lines) => {
        sawLines = true;
        queue.push({ type: "lines", lines });
      },
    },
  );
  // Not connected (or refused before it went out): the caller gets the error as the response, not a stream.
  const failedEarly = await Promise.race([
    sent.then(() => null),
    answer.then(
      () => null,
      (err: unknown) => err,
    ),
  ]);
  if (failedEarly) {
    await recordJob(ctx, { jobId, deviceId, input, started, result: null, error: jobError(failedEarly) });
    throw failedEarly;
  }

  const done = answer
    .then(
      async (a) => {
        if (a.ok) {
          const result = REQUESTS[METHOD[input.kind]].result.parse(a.result);
          if (!sawLines) {
            const lines = outputLines(result);
            if (lines.length) queue.push({ type: "lines", lines });
          }
          await recordJob(ctx, { jobId, deviceId, input, started, result, error: null });
          queue.push({ type: "result", jobId, result });
        } else {
          await recordJob(ctx, {
            jobId,
            deviceId,
            input,
            started,
            result: null,
            error: { reason: "device", message: a.error, drivers: [] },
          });
          queue.push({ type: "error", jobId, code: "DEVICE_REQUEST_FAILED", message: a.error });
        }
      },
      async (err: unknown) => {
        const error = jobError(err);
        await recordJob(ctx, { jobId, deviceId, input, started, result: null, error });
        queue.push({ type: "error", jobId, code: err instanceof ApiError ? err.code : "INTERNAL", message: error.message });
      },
    )
    .catch((err: unknown) => {
      ctx.logger.error({ err, jobId }, "could not record a diagnostic job");
      queue.push({ type: "error", jobId, code: "INTERNAL", message: "the run could not be recorded" });
    })
    .finally(() => queue.close());
  return { jobId, events: queue.drain(), done };
}

export function jobError(err: unknown): JobError {
  const code = err instanceof ApiError ? err.code : "INTERNAL";
  const reason =
    code === "REQUEST_CANCELLED"
      ? "cancelled"
      : code === "DEVICE_TIMEOUT"
        ? "device-timeout"
        : code === "DEVICE_NOT_CONNECTED"
          ? "not-connected"
          : "error";
  return { reason, message: (err as Error).message, drivers: [] };
}

/** The finished run as a job (finished-job.ts), its task naming what ran. */
function recordJob(
  ctx: ServiceCtx,
  run: { jobId: string; deviceId: string; input: DiagnosticInput; started: Date; result: unknown; error: JobError | null },
): Promise<void> {
  return recordFinishedJob(ctx, {
    id: run.jobId,
    deviceId: run.deviceId,
    type: run.input.kind,
    tasks: [{ kind: run.input.kind, summary: summary(run.input) }],
    started: run.started,
    result: run.result,
    error: run.error,
  });
}
