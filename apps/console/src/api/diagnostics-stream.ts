/**
 * Diagnostics run on a router (POST /api/devices/{id}/diagnostics/{kind}): the answer is server-sent events
 * over the POST's response, read by the client's runDeviceDiagnostic (@tern/client) and handed over event by
 * event. Aborting the signal closes the connection, which stops the command on the router.
 */
import { type DiagnosticBody, type DiagnosticEvent, type DiagnosticKind, runDeviceDiagnostic } from "@tern/client";
import { tern } from "./tern.ts";

export type { DiagnosticEvent, DiagnosticKind };

export async function runDiagnostic<K extends DiagnosticKind>(
  deviceId: string,
  kind: K,
  body: DiagnosticBody<K>,
  onEvent: (event: DiagnosticEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  for await (const event of runDeviceDiagnostic(tern.api, deviceId, kind, body, { signal })) onEvent(event);
}
