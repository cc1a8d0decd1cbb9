import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { requestDeviceDump } from "../../services/devices/dumps/request-dump.ts";
import { DeviceDumpSchema, DUMP_AUTH } from "./dump-schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/dump",
  operationId: "requestDeviceDump",
  tags: ["devices"],
  summary: "Ask the device for a diagnostic dump (as `tern-agent dump`)",
  description:
    "202 with the dump in state `pending` (and Location of its download); the agent makes the archive and the server fetches it over the device's link. Follow GET /devices/{id}/dumps: the dump ends `complete` (then download it) or `failed` with the reason (device not connected, larger than TERN_DUMP_MAX_BYTES, agent error). While one is pending, asking again answers that one (200). The newest TERN_DUMP_KEEP dumps of a device are kept. Managers and owners.",
  auth: DUMP_AUTH,
  request: { params: IdParams },
  responses: {
    200: jsonResponse(DeviceDumpSchema, "A dump of this device is already being made: that one"),
    202: jsonResponse(DeviceDumpSchema, "The dump requested"),
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { dump, created } = await requestDeviceDump(requestCtx(c), c.get("deps"), id);
    const location = { location: `/api/devices/${id}/dumps/${dump.id}` };
    return created ? c.json(dump, 202, location) : c.json(dump, 200, location);
  });
}
