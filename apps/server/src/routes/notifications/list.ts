import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { jsonText } from "../../http/json-text.ts";
import { AfterParam, foldListQuery, ListQuerySchema, recordsPageHeaders, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listNotificationsJson } from "../../services/notifications/notifications.ts";
import { NOTIFICATION_KEYS, NotificationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/notifications",
  operationId: "listNotifications",
  tags: ["notifications"],
  summary: "Notifications of the organization, each with its device id",
  description: `${NOTIFICATION_KEYS} Sort keys: the same except severity sorts by rank (info < warning < critical); default lastSeenAt desc.`,
  auth: { resource: "notifications" },
  request: { query: ListQuerySchema.extend(AfterParam) },
  responses: { 200: { ...jsonResponse(z.array(NotificationSchema), "Notifications"), headers: recordsPageHeaders } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    // Built as JSON by the database (services/notifications/list-json.ts).
    const { json, total, next } = await listNotificationsJson(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total, next);
    return jsonText(c, json);
  });
}
