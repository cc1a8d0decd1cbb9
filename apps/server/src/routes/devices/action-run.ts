import { acceptedWithJobs, jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { conflict, notFound } from "../../http/errors.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import { runDeviceAction } from "../../services/devices/actions/run-actions.ts";
import { ACTIONS_DESCRIPTION, DeviceActionRequestSchema } from "./action-schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/actions",
  operationId: "runDeviceAction",
  tags: ["devices"],
  summary: "Run a remote action on one device (sync, restart-agent, stop, start, reset)",
  description: [
    ACTIONS_DESCRIPTION,
    "**202** with `{jobIds}` and `Location: /api/jobs?ids=<job>`. A device that is not approved: 409 CONFLICT.",
  ].join("\n\n"),
  auth: { resource: "devices", permission: "put" },
  errors: ["CONFIRMATION_REQUIRED", "CONFLICT"],
  request: { params: IdParams, body: jsonBody(DeviceActionRequestSchema) },
  responses: { 202: jobsQueuedResponse },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const ctx = requestCtx(c);
    const device = await ctx.db
      .selectFrom("devices")
      .select("id")
      .where("id", "=", id)
      .where("organization_id", "=", ctx.org.id)
      .executeTakeFirst();
    if (!device) throw notFound("device");
    const result = await runDeviceAction(ctx, c.get("deps"), { ...body, deviceIds: [id] });
    if (result.skipped.length) throw conflict(`cannot ${body.action}: ${result.skipped[0]!.reason}`);
    return acceptedWithJobs(c, result.jobIds);
  });
}
