import { jobGroupLocation } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { jobGroupOf, requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { runDeviceAction } from "../../services/devices/actions/run-actions.ts";
import { selectDeviceIds } from "../../services/devices/selection.ts";
import {
  ACTIONS_DESCRIPTION,
  DevicesActionRequestSchema,
  DevicesActionResultSchema,
  SELECTION_DESCRIPTION,
} from "./action-schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/actions",
  operationId: "runDevicesAction",
  tags: ["devices"],
  summary: "Run a remote action on many devices (by ids, filter or tag)",
  description: [
    SELECTION_DESCRIPTION,
    ACTIONS_DESCRIPTION,
    "Devices that are not approved are `skipped`. **202** with `jobGroup` and `Location: /api/jobs?group=<jobGroup>` when jobs were created; **200** with the same body (`jobGroup: null`) otherwise. One audit entry names the action and the devices.",
  ].join("\n\n"),
  auth: { resource: "devices", permission: "put" },
  errors: ["CONFIRMATION_REQUIRED"],
  request: { body: jsonBody(DevicesActionRequestSchema) },
  responses: {
    200: jsonResponse(DevicesActionResultSchema, "No device got a job"),
    202: {
      ...jsonResponse(DevicesActionResultSchema, "Jobs created; they form one job group (Location)"),
      headers: { Location: { description: "/api/jobs?group=<jobGroup>", schema: { type: "string" as const } } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { action, confirm, ...selection } = c.req.valid("json");
    const ctx = requestCtx(c);
    const deviceIds = await selectDeviceIds(ctx, selection);
    const result = await runDeviceAction(ctx, c.get("deps"), { action, confirm, deviceIds });
    const jobGroup = result.jobIds.length ? jobGroupOf(c) : null;
    const body = { action, jobGroup, jobs: result.jobIds.length, skipped: result.skipped };
    return jobGroup ? c.json(body, 202, jobGroupLocation(jobGroup)) : c.json(body, 200);
  });
}
