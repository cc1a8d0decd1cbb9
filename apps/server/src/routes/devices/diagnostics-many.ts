import { DevicesDiagnosticRequest, MAX_DIAGNOSTIC_DEVICES } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import type { DiagnosticInput } from "../../services/devices/diagnostics/run-diagnostic.ts";
import { runDiagnosticOnDevices } from "../../services/devices/diagnostics/run-many.ts";
import { SELECTION_DESCRIPTION } from "./action-schemas.ts";
import { DIAGNOSTICS_AUTH, diagnosticStreamResponse } from "./diagnostics-schemas.ts";
import { streamRun } from "./diagnostics-stream.ts";

const DevicesDiagnosticRequestSchema = DevicesDiagnosticRequest.meta({ id: "DevicesDiagnosticRequest" });

export const route = defineRoute({
  method: "post",
  path: "/devices/diagnostics",
  operationId: "runDevicesDiagnostic",
  tags: ["devices"],
  summary: "Ping, trace or resolve from many devices at once (by ids, filter or tag), streamed",
  description: [
    `\`kind\` (\`ping\`, \`traceroute\` or \`dns\`) and its \`params\` (the bodies of the single-device routes), and the devices: ${SELECTION_DESCRIPTION} At most ${MAX_DIAGNOSTIC_DEVICES} devices (400 DIAGNOSTIC_TOO_MANY_DEVICES), none is 400 VALIDATION_FAILED.`,
    "The answer is one `text/event-stream` for every device: each device's run is that of POST /api/devices/{id}/diagnostics/… (audited, recorded as a job) and its events (`started`, `lines`, `result` or `error`) carry its `deviceId`; eight run at a time. A device that is not connected gets an `error` event with code DEVICE_NOT_CONNECTED and `jobId: null` (its failed run is still a job), the others go on. The last event is `summary` `{devices, succeeded, failed, cancelled}`. Closing the connection stops every run still going and starts no more. Viewers may run it (devices `get`).",
  ].join("\n\n"),
  auth: DIAGNOSTICS_AUTH,
  errors: ["DIAGNOSTIC_TOO_MANY_DEVICES"],
  request: { body: jsonBody(DevicesDiagnosticRequestSchema) },
  responses: diagnosticStreamResponse,
});

export function register(app: ApiApp) {
  app.openapi(route, (c) => {
    const { kind, params, deviceIds, filter } = c.req.valid("json");
    const input = { kind, params } as DiagnosticInput;
    const selection = deviceIds ? { deviceIds } : { filter };
    return streamRun(c as never, (ctx, signal) => runDiagnosticOnDevices(ctx, c.get("deps"), selection, input, signal)) as never;
  });
}
