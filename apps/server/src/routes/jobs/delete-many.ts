import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { deleteJobs } from "../../services/jobs/jobs.ts";
import { DeleteJobsQuery, JobsDeletedSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/jobs",
  operationId: "deleteJobs",
  tags: ["jobs"],
  summary: "Delete every job matching a filter",
  description: [
    "Deletes every job matching `filter` (the keys of GET /api/jobs) and/or `ids`, without paging; with neither, refused (400) unless `all=true`. Answers the number deleted.",
    "Deleting a job deletes its record. A queued job is thereby cancelled (never sent); a running one is forgotten (a late result for it matches no job). It does not undo the change that queued it: the device keeps its new desired configuration and is brought to it by the next sync. To undo a change, make the opposite change.",
    "A running agent upgrade job (type `upgrade`) cannot be deleted: 409 JOB_NOT_CANCELLABLE, and nothing is deleted; pause or cancel its rollout (POST /api/agent-upgrades/{id}/pause, /cancel). A finished one can.",
  ].join("\n\n"),
  auth: { resource: "jobs" },
  errors: ["JOB_NOT_CANCELLABLE"],
  request: { query: DeleteJobsQuery },
  responses: { 200: jsonResponse(JobsDeletedSchema, "How many jobs were deleted") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const result = await deleteJobs(requestCtx(c), {
      filter: [...(q.filter ?? []), ...(q.filters ?? [])],
      ids: q.ids,
      all: q.all,
    });
    return c.json(result, 200);
  });
}
