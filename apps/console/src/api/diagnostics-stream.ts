/**
 * Diagnostics run on a router (POST /api/devices/{id}/diagnostics/{kind}):
 * the answer is server-sent events over the POST's response, read here with
 * fetch (EventSource cannot POST) and handed over event by event. Aborting
 * the signal closes the connection, which stops the command on the router.
 */
import { ok } from "@tern/client";
import { tern } from "./tern.ts";

export type DiagnosticKind = "ping" | "traceroute" | "dns";

export type DiagnosticEvent =
  | { type: "started"; jobId: string; deviceId: string; kind: DiagnosticKind; target: string }
  | { type: "lines"; lines: string[] }
  | { type: "result"; jobId: string; result: unknown }
  | { type: "error"; jobId: string; code: string; message: string };

export async function runDiagnostic(
  deviceId: string,
  kind: DiagnosticKind,
  body: Record<string, unknown>,
  onEvent: (event: DiagnosticEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const init = { params: { path: { id: deviceId } }, body: body as never, parseAs: "stream" as const, signal };
  const call =
    kind === "ping"
      ? tern.api.POST("/api/devices/{id}/diagnostics/ping", init)
      : kind === "traceroute"
        ? tern.api.POST("/api/devices/{id}/diagnostics/traceroute", init)
        : tern.api.POST("/api/devices/{id}/diagnostics/dns", init);
  const stream = (await ok(
    call as Promise<{ data?: unknown; error?: unknown; response: Response }>,
  )) as ReadableStream<Uint8Array>;
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const data = buffer
        .slice(0, cut)
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      buffer = buffer.slice(cut + 2);
      if (data) onEvent(JSON.parse(data) as DiagnosticEvent);
      cut = buffer.indexOf("\n\n");
    }
  }
}
