import { jobsLocationHeader, locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { deleteTunnels } from "../../services/tunnels/delete.ts";
import { TUNNEL_LIST_KEYS } from "../../services/tunnels/query.ts";
import { TunnelDeleteQuery, TunnelsDeletedSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/tunnels",
  operationId: "deleteTunnels",
  tags: ["tunnels"],
  summary: "Delete every tunnel matching a filter",
  description: `Filter keys: ${TUNNEL_LIST_KEYS}. A filter is required. One transaction and one recompile per affected device, whatever the number of tunnels: 202 with one \`deltunnels\` job per device, or 200 when nothing changed on any device (e.g. nothing matched).`,
  auth: { resource: "tunnels" },
  request: { query: TunnelDeleteQuery },
  responses: {
    200: jsonResponse(TunnelsDeletedSchema, "Deleted (possibly nothing); no device configuration changed"),
    202: { ...jsonResponse(TunnelsDeletedSchema, "Deleted; device jobs were queued"), headers: jobsLocationHeader },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const result = await deleteTunnels(requestCtx(c), [...(query.filter ?? []), ...(query.filters ?? [])]);
    return result.jobIds.length ? c.json(result, 202, locationOfJobs(c, result.jobIds)) : c.json(result, 200);
  });
}
