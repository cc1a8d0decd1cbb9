import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { editDeviceTags } from "../../services/devices/tags/bulk-tags.ts";
import { DeviceTagsBulkResultSchema, DeviceTagsBulkSchema, SELECTION_DESCRIPTION } from "./action-schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/tags",
  operationId: "editDevicesTags",
  tags: ["devices"],
  summary: "Add and remove tags on many devices (by ids or filter)",
  description: [
    SELECTION_DESCRIPTION,
    "`add` and `remove` are lists of tags (trimmed, 1–64 characters of letters, digits and `. _ : / -`); a tag in both is removed. A device ends with at most 32 tags: when one would have more, nothing changes (400 VALIDATION_FAILED naming the devices). One transaction; one audit entry (`tags`) naming the devices that changed. Tags are not part of the devices' configuration: no job.",
    "To set one device's whole list, PUT /api/devices/{id} with `tags`.",
  ].join("\n\n"),
  auth: { resource: "devices", permission: "put" },
  request: { body: jsonBody(DeviceTagsBulkSchema) },
  responses: { 200: jsonResponse(DeviceTagsBulkResultSchema, "Devices selected and devices whose tags changed") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await editDeviceTags(requestCtx(c), c.req.valid("json")), 200));
}
