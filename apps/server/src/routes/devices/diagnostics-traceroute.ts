import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import {
  DIAGNOSTIC_STREAM_DESCRIPTION,
  DIAGNOSTICS_AUTH,
  diagnosticStreamResponse,
  TracerouteBodySchema,
} from "./diagnostics-schemas.ts";
import { streamDiagnostic } from "./diagnostics-stream.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/diagnostics/traceroute",
  operationId: "runDeviceTraceroute",
  tags: ["devices"],
  summary: "Trace the route from the device to a target, hop by hop as it runs",
  description: DIAGNOSTIC_STREAM_DESCRIPTION,
  auth: DIAGNOSTICS_AUTH,
  errors: ["DEVICE_NOT_CONNECTED"],
  request: { params: IdParams, body: jsonBody(TracerouteBodySchema) },
  responses: diagnosticStreamResponse,
});

export function register(app: ApiApp) {
  app.openapi(
    route,
    (c) => streamDiagnostic(c as never, c.req.valid("param").id, { kind: "traceroute", params: c.req.valid("json") }) as never,
  );
}
