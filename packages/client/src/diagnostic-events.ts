/**
 * Diagnostics run on a router (POST /api/devices/{id}/diagnostics/{ping|traceroute|dns}) answer with
 * server-sent events over the POST's response (EventSource cannot POST, so fetch reads them). This reads that
 * body as the protocol's typed events (DiagnosticStreamEvent), for the CLI and the console alike.
 *
 * The SSE framing (fields, CR/LF variants, comments and keep-alives, events split across chunks) is
 * eventsource-parser's, a small, dependency-free parser of the WHATWG rules. Breaking out of the loop early
 * cancels the body, which closes the connection and stops the command on the router.
 */
import { type DiagnosticJobType, DiagnosticStreamEvent, FleetDiagnosticStreamEvent } from "@tern/protocol";
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { TernApi } from "./client.ts";
import { TernApiError } from "./errors.ts";
import type { paths } from "./types.ts";
import { ok } from "./unwrap.ts";

export type {
  DiagnosticStreamEvent as DiagnosticEvent,
  FleetDiagnosticStreamEvent as FleetDiagnosticEvent,
} from "@tern/protocol";
export type DiagnosticKind = DiagnosticJobType;

const PATHS = {
  ping: "/api/devices/{id}/diagnostics/ping",
  traceroute: "/api/devices/{id}/diagnostics/traceroute",
  dns: "/api/devices/{id}/diagnostics/dns",
} as const satisfies Record<DiagnosticKind, keyof paths>;

/** The request body of one kind, from the OpenAPI document. */
export type DiagnosticBody<K extends DiagnosticKind> = NonNullable<
  paths[(typeof PATHS)[K]]["post"]["requestBody"]
>["content"]["application/json"];

/** What this reader needs of a zod schema (the protocol's; zod itself is the protocol's dependency). */
interface Schema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

const unexpected = (message: string) => new TernApiError(message, "UNEXPECTED_RESPONSE", 200);

function parseEvent<T>(schema: Schema<T>, data: string): T {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw unexpected(`the diagnostic stream sent an event that is not JSON: ${data.slice(0, 200)}`);
  }
  const event = schema.safeParse(json);
  if (!event.success) throw unexpected(`the diagnostic stream sent an unknown event: ${data.slice(0, 200)}`);
  return event.data;
}

/** The events of an SSE body checked against `schema`, up to and including the one `isLast` picks. */
async function* streamEvents<T>(
  body: ReadableStream<Uint8Array>,
  schema: Schema<T>,
  isLast: (event: T) => boolean,
): AsyncGenerator<T> {
  const reader = body
    // TypeScript's DOM types have TextDecoderStream take BufferSource, wider than the body's Uint8Array.
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream({ onError: "terminate" }))
    .getReader();
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        throw unexpected("the diagnostic stream ended before its result");
      }
      // Named events are not part of this protocol (yet): skipped, so a newer server's extras do no harm.
      if (value.event !== undefined && value.event !== "message") continue;
      const event = parseEvent(schema, value.data);
      yield event;
      if (isLast(event)) return;
    }
  } finally {
    // Left early (break, a thrown error, the final event): let go of the connection.
    if (!ended) await reader.cancel().catch(() => {});
  }
}

/**
 * The events of a diagnostic run's response body, as they arrive: `started`, `lines`…, then `result` or
 * `error` (the run's own failure, an event like the others). A body that ends before either, or sends what is
 * not such an event, throws TernApiError UNEXPECTED_RESPONSE; a connection that breaks throws as fetch does.
 */
export function diagnosticEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<DiagnosticStreamEvent> {
  return streamEvents(body, DiagnosticStreamEvent, (e) => e.type === "result" || e.type === "error");
}

/** The events of a diagnostic on many devices (POST /api/devices/diagnostics), up to its `summary`. */
export function fleetDiagnosticEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<FleetDiagnosticStreamEvent> {
  return streamEvents(body, FleetDiagnosticStreamEvent, (e) => e.type === "summary");
}

/**
 * Starts a diagnostic on a device and yields its events (see diagnosticEvents). Errors before the stream
 * starts (404, 400 VALIDATION_FAILED, 409 DEVICE_NOT_CONNECTED) throw TernApiError; aborting `signal` closes the
 * connection, which stops the command on the router.
 */
export async function* runDeviceDiagnostic<K extends DiagnosticKind>(
  api: TernApi,
  deviceId: string,
  kind: K,
  body: DiagnosticBody<K>,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<DiagnosticStreamEvent> {
  // One literal path for the type checker; the body was typed against the kind's own path above.
  const call = api.POST(PATHS[kind] as typeof PATHS.ping, {
    params: { path: { id: deviceId } },
    body: body as DiagnosticBody<"ping">,
    parseAs: "stream",
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const stream = await ok(call as Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>);
  if (!stream) throw unexpected("the diagnostic answer has no body");
  yield* diagnosticEvents(stream);
}

/** The body of POST /api/devices/diagnostics, from the OpenAPI document. */
export type FleetDiagnosticBody = NonNullable<
  paths["/api/devices/diagnostics"]["post"]["requestBody"]
>["content"]["application/json"];

/**
 * Runs a diagnostic on many devices (by ids, filter or tag) and yields every device's events, each with its
 * `deviceId`, then the `summary`. 400 (DIAGNOSTIC_TOO_MANY_DEVICES, VALIDATION_FAILED) and 404 throw
 * TernApiError; aborting `signal` stops every run still going.
 */
export async function* runFleetDiagnostic(
  api: TernApi,
  body: FleetDiagnosticBody,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<FleetDiagnosticStreamEvent> {
  const call = api.POST("/api/devices/diagnostics", {
    body,
    parseAs: "stream",
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const stream = await ok(call as Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>);
  if (!stream) throw unexpected("the diagnostic answer has no body");
  yield* fleetDiagnosticEvents(stream);
}
