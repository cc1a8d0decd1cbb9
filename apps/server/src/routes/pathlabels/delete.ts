import { acceptedWithJobs, jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deletePathLabel } from "../../services/path-labels.ts";
import { PathLabelDeleteQuery } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/pathlabels/{id}",
  operationId: "deletePathLabel",
  tags: ["pathlabels"],
  summary: "Delete a path label",
  description:
    "A label still used by an interface, a tunnel or a multi-link policy is not deleted: 409 CONFLICT with each user in `details`. With `force=true` it is removed from all of them (a policy rule left without a label is removed) and the devices concerned are recompiled: 202 with their job ids. 204 when no device was affected.",
  auth: { resource: "pathlabels" },
  errors: ["CONFLICT"],
  request: { params: IdParams, query: PathLabelDeleteQuery },
  responses: { 202: jobsQueuedResponse, 204: { description: "Deleted; no device was affected" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds } = await deletePathLabel(requestCtx(c), c.req.valid("param").id, c.req.valid("query").force);
    if (jobIds.length) return acceptedWithJobs(c, jobIds);
    return c.body(null, 204);
  });
}
