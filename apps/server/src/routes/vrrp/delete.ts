import { acceptedWithJobs, jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteVrrpGroup } from "../../services/vrrp.ts";

export const route = defineRoute({
  method: "delete",
  path: "/vrrp/{id}",
  operationId: "deleteVrrpGroup",
  tags: ["vrrp"],
  summary: "Delete a VRRP group; its members get a vrrp job each",
  auth: { resource: "vrrp" },
  request: { params: IdParams },
  responses: { 202: jobsQueuedResponse },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds } = await deleteVrrpGroup(requestCtx(c), c.req.valid("param").id);
    return acceptedWithJobs(c, jobIds);
  });
}
