import { jobsLocationHeader, locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { deleteTunnel } from "../../services/tunnels/delete.ts";
import { TunnelsDeletedSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/tunnels/{id}",
  operationId: "deleteTunnel",
  tags: ["tunnels"],
  summary: "Delete one tunnel",
  description:
    "Recompiles both ends (or the device of a peer tunnel) and answers 202 with their `deltunnels` jobs, or 200 when no device configuration changed.",
  auth: { resource: "tunnels" },
  request: { params: IdParams },
  responses: {
    200: jsonResponse(TunnelsDeletedSchema, "Deleted; no device configuration changed"),
    202: { ...jsonResponse(TunnelsDeletedSchema, "Deleted; device jobs were queued"), headers: jobsLocationHeader },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const result = await deleteTunnel(requestCtx(c), c.req.valid("param").id);
    return result.jobIds.length ? c.json(result, 202, locationOfJobs(c, result.jobIds)) : c.json(result, 200);
  });
}
