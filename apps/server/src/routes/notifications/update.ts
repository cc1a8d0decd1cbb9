import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { markNotifications } from "../../services/notifications/notifications.ts";
import { NOTIFICATION_KEYS, NotificationFilterQuery, NotificationsUpdatedSchema, NotificationsUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/notifications",
  operationId: "updateNotifications",
  tags: ["notifications"],
  summary: "Mark notifications read or unread (and resolved), by ids or by filter",
  description: `Select with \`ids\` in the body or with the \`filter\` query (\`filter=[]\` selects all), not both. Body: \`status\` read|unread and/or \`resolved: true\`. ${NOTIFICATION_KEYS}`,
  auth: { resource: "notifications" },
  request: { query: NotificationFilterQuery, body: jsonBody(NotificationsUpdateSchema) },
  responses: { 200: jsonResponse(NotificationsUpdatedSchema, "How many notifications matched and were marked") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { filter, filters } = c.req.valid("query");
    const { ids, status, resolved } = c.req.valid("json");
    const filterGiven = filter !== undefined || filters !== undefined;
    const result = await markNotifications(
      requestCtx(c),
      { ids, filter: filterGiven ? [...(filter ?? []), ...(filters ?? [])] : undefined },
      { status, resolved },
    );
    return c.json(result, 200);
  });
}
