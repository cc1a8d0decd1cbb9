import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { listDeviceDumps } from "../../services/devices/dumps/dumps.ts";
import { DeviceDumpSchema, DUMP_AUTH } from "./dump-schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/dumps",
  operationId: "listDeviceDumps",
  tags: ["devices"],
  summary: "The device's diagnostic dumps, newest first (pending, complete or failed)",
  auth: DUMP_AUTH,
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.array(DeviceDumpSchema), "Dumps") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listDeviceDumps(requestCtx(c), c.req.valid("param").id), 200));
}
