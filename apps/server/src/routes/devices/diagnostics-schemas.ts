/**
 * Diagnostics on a device (issue 19): ping, traceroute and DNS lookup run on
 * the router and answered as a stream; the agent's log. Bodies are the
 * protocol's request params, strict (an unknown field is 400).
 */
import { z } from "@hono/zod-openapi";
import { AgentLogLevel, DnsLookupParams, MAX_LOG_LINES, PingParams, TracerouteParams } from "@tern/protocol";

/** Read-only probes from the router: whoever may read the device (viewers too), like its status. */
export const DIAGNOSTICS_AUTH = { resource: "devices", permission: "get" } as const;
/**
 * The agent's log holds the router's addresses, neighbours, config errors and what the agent did: as much as a
 * diagnostic dump, so the same right as dumps (devices `post`: managers and owners), not a viewer's.
 */
export const LOGS_AUTH = { resource: "devices", permission: "post" } as const;

export const PingBodySchema = z.strictObject(PingParams.shape).meta({ id: "DiagnosticPing" });
export const TracerouteBodySchema = z.strictObject(TracerouteParams.shape).meta({ id: "DiagnosticTraceroute" });
export const DnsBodySchema = z.strictObject(DnsLookupParams.shape).meta({ id: "DiagnosticDnsLookup" });

export const DIAGNOSTIC_STREAM_DESCRIPTION = [
  "Runs on the router; the answer is a `text/event-stream` (server-sent events over this POST's response: read it with fetch, not EventSource). Each event is one `data:` line of JSON with a `type`:",
  "- `started` `{jobId, deviceId, kind, target}` first;",
  "- `lines` `{lines: [...]}` with the tool's output lines as the router sends them (an agent older than this API sends none: its whole output comes as one `lines` event before the result);",
  "- then exactly one of `result` `{jobId, result}` (the parsed result) or `error` `{jobId, code, message}` (DEVICE_REQUEST_FAILED: the router refused, e.g. an unknown host or an agent too old for the method; DEVICE_TIMEOUT; DEVICE_NOT_CONNECTED: the link dropped meanwhile). The stream then ends.",
  "Closing the connection stops the command on the router. Each run is audited when it starts and recorded as a job (type `ping`, `traceroute` or `dns`, with `result`) when it ends: GET /api/jobs/{jobId}.",
  "Errors before the stream starts are ordinary JSON errors: 404 for a device of another organization, 400 VALIDATION_FAILED for a bad target or an unknown field, 409 DEVICE_NOT_CONNECTED when no server instance holds a link to the device. Viewers may run it (devices `get`).",
].join("\n\n");

export const diagnosticStreamResponse = {
  200: {
    description: "The run's events",
    content: {
      "text/event-stream": {
        schema: z.string().meta({ description: 'data: {"type":"started"|"lines"|"result"|"error", …}' }),
      },
    },
  },
};

export const LogsQuerySchema = z.strictObject({
  lines: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LOG_LINES)
    .default(200)
    .meta({ param: { name: "lines", in: "query" }, description: `Last lines to answer (1 to ${MAX_LOG_LINES})` }),
  level: AgentLogLevel.default("trace").meta({
    param: { name: "level", in: "query" },
    description: "Only lines of this level and more severe (trace < debug < info < warn < error < fatal)",
  }),
});

export const DeviceLogsSchema = z
  .object({
    deviceId: z.string(),
    level: AgentLogLevel,
    lines: z.array(z.string()).meta({ description: "The agent's pino JSON lines, oldest first" }),
    truncated: z.boolean().meta({ description: "Fewer lines than asked: the answer reached its size limit (768 KiB)" }),
    file: z.string().nullable().meta({ description: "The log file the agent read (null: it logs to none)" }),
    jobId: z.string().meta({ description: "The job (type `logs`) that records this read: GET /api/jobs/{jobId}" }),
  })
  .meta({ id: "DeviceLogs" });
