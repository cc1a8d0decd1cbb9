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
