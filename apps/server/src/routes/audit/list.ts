import { z } from "@hono/zod-openapi";
import { AuditEntry } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listAudit } from "../../services/audit.ts";

const AuditEntrySchema = AuditEntry.meta({ id: "AuditEntry" });

export const route = defineRoute({
  method: "get",
  path: "/audit",
  operationId: "listAudit",
  tags: ["audit"],
  summary: "The organization's audit log (owners and managers)",
  description: "Newest first by default. Filter and sort keys: id, action, resource, resourceId, actor, at.",
  auth: { resource: "audit" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(AuditEntrySchema), "Audit entries"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listAudit(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
