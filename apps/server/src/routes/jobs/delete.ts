import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteJob } from "../../services/jobs/jobs.ts";

export const route = defineRoute({
  method: "delete",
  path: "/jobs/{id}",
  operationId: "deleteJob",
  tags: ["jobs"],
  summary: "Delete a job (cancels it when queued)",
  description: [
    "Deleting a job deletes its record. A queued job is thereby cancelled (never sent); a running one is forgotten (a late result for it matches no job). It does not undo the change that queued it: the device keeps its new desired configuration and is brought to it by the next sync. To undo a change, make the opposite change.",
    "A running agent upgrade job (type `upgrade`) cannot be deleted: 409 JOB_NOT_CANCELLABLE; pause or cancel its rollout (POST /api/agent-upgrades/{id}/pause, /cancel). A finished one can.",
  ].join("\n\n"),
  auth: { resource: "jobs" },
  errors: ["JOB_NOT_CANCELLABLE"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteJob(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
