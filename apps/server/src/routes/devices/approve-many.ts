/**
 * `POST /devices/approve`: approve many devices by ids or by filter, with the
 * checks of one approval, answering each device's result and one job group.
 */
import { z } from "@hono/zod-openapi";
import { ErrorCode, Filter, Id } from "@tern/protocol";
import { jobGroupLocation } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { approveDevices } from "../../services/devices/approval/approve-many.ts";
import { DEVICE_SELECTION_KEYS, MAX_SELECTED_DEVICE_IDS } from "../../services/devices/selection.ts";

export const ApproveDevicesSchema = z
  .strictObject({
    deviceIds: z.array(Id).min(1).max(MAX_SELECTED_DEVICE_IDS).optional(),
    filter: z.array(Filter).max(20).optional(),
  })
  .refine((s) => (s.deviceIds === undefined) !== (s.filter === undefined), {
    message: "give either deviceIds or filter ([] = every device), not both or neither",
    path: ["deviceIds"],
  })
  .meta({ id: "ApproveDevices" });

const ApprovalResultSchema = z
  .object({
    id: Id,
    status: z.enum(["approved", "alreadyApproved", "refused"]),
    jobs: z.number().int().min(0).optional().meta({ description: "approved: the jobs its approval queued" }),
    code: ErrorCode.optional().meta({ description: "refused: the error code PUT /devices/{id} would answer" }),
    error: z.string().optional(),
  })
  .meta({ id: "DeviceApprovalResult" });

export const DevicesApprovedSchema = z
  .object({
    results: z.array(ApprovalResultSchema),
    approved: z.number().int().min(0),
    alreadyApproved: z.number().int().min(0),
    refused: z.number().int().min(0),
    jobGroup: Id.nullable().meta({ description: "Every job queued: GET /api/jobs?group=<jobGroup>; null when none was" }),
    jobs: z.number().int().min(0),
  })
  .meta({ id: "DevicesApproved" });

export const route = defineRoute({
  method: "post",
  path: "/devices/approve",
  operationId: "approveDevices",
  tags: ["devices"],
  summary: "Approve many devices (by ids or by filter), each with the checks of one approval",
  description: [
    `Body: \`deviceIds\` (at most ${MAX_SELECTED_DEVICE_IDS.toLocaleString("en")}) or \`filter\` (a JSON array of {key, op, val} as GET /api/devices takes; \`[]\` = every device of the organization). Filter keys: ${DEVICE_SELECTION_KEYS}. Unknown device ids: 404 NOT_FOUND naming them, nothing changes.`,
    "Each device is approved with the checks of PUT /api/devices/{id} with `isApproved: true`, in batches of 500 devices per transaction: a device without an identity key, or whose configuration is invalid, is `refused` with the code that PUT would answer (CONFLICT, VALIDATION_FAILED, LAN_OVERLAPPING …) and the others go on. A device approved already is `alreadyApproved` and gets no job.",
    "**202** with the per-device results and `jobGroup`, and `Location: /api/jobs?group=<jobGroup>` listing every job queued, when jobs were queued; **200** with the same body otherwise.",
  ].join("\n\n"),
  auth: { resource: "devices", permission: "put" },
  request: { body: jsonBody(ApproveDevicesSchema) },
  responses: {
    200: jsonResponse(DevicesApprovedSchema, "No device needed approval (or every one was refused)"),
    202: {
      ...jsonResponse(DevicesApprovedSchema, "Devices approved; their jobs form one job group (Location)"),
      headers: { Location: { description: "/api/jobs?group=<jobGroup>", schema: { type: "string" as const } } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const result = await approveDevices(requestCtx(c), c.req.valid("json"));
    return result.jobGroup ? c.json(result, 202, jobGroupLocation(result.jobGroup)) : c.json(result, 200);
  });
}
