import { acceptedWithJobs, jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteDevice } from "../../services/devices/delete.ts";
import { RemoveVrrpQuerySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/devices/{id}",
  operationId: "deleteDevice",
  tags: ["devices"],
  summary: "Delete a device, its tunnels, jobs and notifications",
  description: [
    "A device in a VRRP group is refused with 409 VRRP_INSTALLED_ON_DEVICE naming the groups, unless `removeVrrp=true`: then it leaves its groups (a group left without members is deleted) and the remaining members get `vrrp` jobs.",
    "Its tunnels are deleted and their far ends get `deltunnels` jobs. All in one transaction.",
    "**202** with `{jobIds}` and `Location` when other devices got jobs, **204** otherwise.",
  ].join("\n\n"),
  auth: { resource: "devices" },
  errors: ["VRRP_INSTALLED_ON_DEVICE"],
  request: { params: IdParams, query: RemoveVrrpQuerySchema },
  responses: { 202: jobsQueuedResponse, 204: { description: "Deleted; no other device needed a change" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds } = await deleteDevice(requestCtx(c), c.req.valid("param").id, {
      removeVrrp: c.req.valid("query").removeVrrp,
    });
    return jobIds.length ? acceptedWithJobs(c, jobIds) : c.body(null, 204);
  });
}
