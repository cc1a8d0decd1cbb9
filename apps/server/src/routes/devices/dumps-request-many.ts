import { z } from "@hono/zod-openapi";
import { DevicesDumpRequest, MAX_DUMP_DEVICES } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { requestDeviceDumps } from "../../services/devices/dumps/request-many.ts";
import { SELECTION_DESCRIPTION } from "./action-schemas.ts";
import { DeviceDumpSchema, DUMP_AUTH } from "./dump-schemas.ts";

const DevicesDumpRequestSchema = DevicesDumpRequest.meta({ id: "DevicesDumpRequest" });
const DevicesDumpResultSchema = z
  .object({
    dumps: z.array(DeviceDumpSchema).meta({ description: "One per device, pending (a dump already pending is that one)" }),
    created: z.number().int().min(0).meta({ description: "Dumps asked for now (the others were already pending)" }),
  })
  .meta({ id: "DevicesDumpResult" });

export const route = defineRoute({
  method: "post",
  path: "/devices/dumps",
  operationId: "requestDevicesDumps",
  tags: ["devices"],
  summary: "Ask many devices (by ids, filter or tag) for a diagnostic dump each",
  description: [
    SELECTION_DESCRIPTION,
    `At most ${MAX_DUMP_DEVICES} devices (400 DIAGNOSTIC_TOO_MANY_DEVICES); none is 400 VALIDATION_FAILED. Each device's dump is that of POST /api/devices/{id}/dump: pending at first, collected in the background, then \`complete\` or \`failed\` (an offline device's fails at once with the reason), each recorded as a job of type \`dump\` with the dump's id when it ends. A device with a dump already pending answers that one. **202** with every device's dump. Managers and owners.`,
  ].join("\n\n"),
  auth: DUMP_AUTH,
  errors: ["DIAGNOSTIC_TOO_MANY_DEVICES"],
  request: { body: jsonBody(DevicesDumpRequestSchema) },
  responses: { 202: jsonResponse(DevicesDumpResultSchema, "The dumps requested") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { deviceIds, filter } = c.req.valid("json");
    const { dumps, created } = await requestDeviceDumps(requestCtx(c), c.get("deps"), deviceIds ? { deviceIds } : { filter });
    return c.json({ dumps, created }, 202);
  });
}
