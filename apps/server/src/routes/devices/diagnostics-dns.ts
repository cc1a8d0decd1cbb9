import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import {
  DIAGNOSTIC_STREAM_DESCRIPTION,
  DIAGNOSTICS_AUTH,
  DnsBodySchema,
  diagnosticStreamResponse,
} from "./diagnostics-schemas.ts";
import { streamDiagnostic } from "./diagnostics-stream.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/diagnostics/dns",
  operationId: "runDeviceDns",
  tags: ["devices"],
  summary: "Resolve a name on the device (its own resolver, or a server given)",
  description: DIAGNOSTIC_STREAM_DESCRIPTION,
  auth: DIAGNOSTICS_AUTH,
  errors: ["DEVICE_NOT_CONNECTED"],
  request: { params: IdParams, body: jsonBody(DnsBodySchema) },
  responses: diagnosticStreamResponse,
});

export function register(app: ApiApp) {
  app.openapi(
    route,
    (c) => streamDiagnostic(c as never, c.req.valid("param").id, { kind: "dns", params: c.req.valid("json") }) as never,
  );
}
