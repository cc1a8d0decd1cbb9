import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import {
  DIAGNOSTIC_STREAM_DESCRIPTION,
  DIAGNOSTICS_AUTH,
  diagnosticStreamResponse,
  PingBodySchema,
} from "./diagnostics-schemas.ts";
import { streamDiagnostic } from "./diagnostics-stream.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/diagnostics/ping",
  operationId: "runDevicePing",
  tags: ["devices"],
  summary: "Ping a target from the device, answered line by line as it runs",
  description: DIAGNOSTIC_STREAM_DESCRIPTION,
  auth: DIAGNOSTICS_AUTH,
  errors: ["DEVICE_NOT_CONNECTED"],
  request: { params: IdParams, body: jsonBody(PingBodySchema) },
  responses: diagnosticStreamResponse,
});

export function register(app: ApiApp) {
  app.openapi(
    route,
    (c) => streamDiagnostic(c as never, c.req.valid("param").id, { kind: "ping", params: c.req.valid("json") }) as never,
  );
}
