/**
 * The events of a diagnostic run as the API streams them (POST /api/devices/{id}/diagnostics/{kind}: one SSE
 * `data:` line of JSON each): `started`, then `lines` as the router sends them, then exactly one `result` or
 * `error`. The server emits them (services/devices/diagnostics/run-diagnostic.ts); the client reads them
 * (@tern/client diagnosticEvents).
 */
import * as z from "zod";
import { ErrorCode } from "./errors.ts";
import { DIAGNOSTIC_JOB_TYPES } from "./job.ts";

/** One event of a diagnostic run's stream. */
export const DiagnosticStreamEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("started"),
    jobId: z.string(),
    deviceId: z.string(),
    kind: z.enum(DIAGNOSTIC_JOB_TYPES),
    target: z.string(),
  }),
  z.object({ type: z.literal("lines"), lines: z.array(z.string()) }),
  z.object({ type: z.literal("result"), jobId: z.string(), result: z.unknown() }),
  z.object({ type: z.literal("error"), jobId: z.string(), code: ErrorCode, message: z.string() }),
]);
export type DiagnosticStreamEvent = z.infer<typeof DiagnosticStreamEvent>;

/**
 * One event of a diagnostic on many devices (POST /api/devices/diagnostics): each device's run's events with
 * its `deviceId` (an offline device's `error` has `jobId: null`), then one `summary` last.
 */
export const FleetDiagnosticStreamEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("started"),
    jobId: z.string(),
    deviceId: z.string(),
    kind: z.enum(DIAGNOSTIC_JOB_TYPES),
    target: z.string(),
  }),
  z.object({ type: z.literal("lines"), deviceId: z.string(), lines: z.array(z.string()) }),
  z.object({ type: z.literal("result"), deviceId: z.string(), jobId: z.string(), result: z.unknown() }),
  z.object({
    type: z.literal("error"),
    deviceId: z.string(),
    jobId: z.string().nullable(),
    code: ErrorCode,
    message: z.string(),
  }),
  z.object({
    type: z.literal("summary"),
    devices: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    cancelled: z.number().int(),
  }),
]);
export type FleetDiagnosticStreamEvent = z.infer<typeof FleetDiagnosticStreamEvent>;
