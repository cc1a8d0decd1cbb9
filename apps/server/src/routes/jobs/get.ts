import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getJob } from "../../services/jobs/jobs.ts";
import { JobSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/jobs/{id}",
  operationId: "getJob",
  tags: ["jobs"],
  summary: "One job: state, tasks, target config hash, error per driver",
  auth: { resource: "jobs" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(JobSchema, "The job") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getJob(requestCtx(c), c.req.valid("param").id), 200));
}
