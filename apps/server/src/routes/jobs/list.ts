import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { jsonText } from "../../http/json-text.ts";
import { foldListQuery, recordsPageHeaders, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { JOB_LIST, listJobsJson } from "../../services/jobs/jobs.ts";
import { JobListQuery, JobSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/jobs",
  operationId: "listJobs",
  tags: ["jobs"],
  summary: "Device jobs of the organization, each with its device's name and hostname",
  description: `States: queued → running → complete | failed. Filter and sort keys: ${Object.keys(JOB_LIST.fields).join(", ")}; time ranges with < > <= >= on createdAt, startedAt, finishedAt. Default sort: createdAt descending. \`ids=a,b\` lists those jobs (the Location of a 202).`,
  auth: { resource: "jobs" },
  request: { query: JobListQuery },
  responses: { 200: { ...jsonResponse(z.array(JobSchema), "Jobs"), headers: recordsPageHeaders } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    // Built as JSON by the database (services/jobs/list-json.ts).
    const { json, total, next } = await listJobsJson(requestCtx(c), {
      query: foldListQuery(query),
      ids: query.ids,
      group: query.group,
    });
    withRecordsTotal(c, total, next);
    return jsonText(c, json);
  });
}
