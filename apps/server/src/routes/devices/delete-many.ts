import { locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { deleteDevices } from "../../services/devices/delete.ts";
import { DeleteDevicesQuery, DevicesDeletedSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/devices",
  operationId: "deleteDevices",
  tags: ["devices"],
  summary: "Delete every device matching a filter",
  description: [
    "Deletes every device matching `filter` (the keys of GET /api/devices) and/or `ids`, without paging. With neither, the request is refused (400) unless `all=true` asks for every device of the organization.",
    "As DELETE /api/devices/{id}: `removeVrrp=true` is needed when a device is in a VRRP group (409 VRRP_INSTALLED_ON_DEVICE naming the groups otherwise); tunnels go with the devices and the far ends get `deltunnels` jobs, the remaining VRRP members `vrrp` jobs. One transaction: all or nothing.",
    "**202** with `{deviceIds, jobIds}` and `Location: /api/jobs?ids=…` when jobs were queued, **200** with the same body (`jobIds: []`) otherwise. Matching no device is 200 with empty lists.",
  ].join("\n\n"),
  auth: { resource: "devices" },
  errors: ["VRRP_INSTALLED_ON_DEVICE"],
  request: { query: DeleteDevicesQuery },
  responses: {
    200: jsonResponse(DevicesDeletedSchema, "Deleted; no other device needed a change"),
    202: {
      ...jsonResponse(DevicesDeletedSchema, "Deleted; other devices got jobs (Location lists them)"),
      headers: { Location: { description: "/api/jobs?ids=… listing the queued jobs", schema: { type: "string" as const } } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const result = await deleteDevices(requestCtx(c), {
      filter: [...(q.filter ?? []), ...(q.filters ?? [])],
      ids: q.ids,
      all: q.all,
      removeVrrp: q.removeVrrp,
    });
    return result.jobIds.length ? c.json(result, 202, locationOfJobs(c, result.jobIds)) : c.json(result, 200);
  });
}
