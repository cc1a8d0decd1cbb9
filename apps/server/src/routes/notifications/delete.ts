import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { deleteNotifications } from "../../services/notifications/notifications.ts";
import { NOTIFICATION_KEYS, NotificationFilterQuery, NotificationsDeletedSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/notifications",
  operationId: "deleteNotifications",
  tags: ["notifications"],
  summary: "Delete every notification matching a filter",
  description: `The \`filter\` query is required (\`filter=[]\` deletes all of the organization's notifications). ${NOTIFICATION_KEYS}`,
  auth: { resource: "notifications" },
  request: { query: NotificationFilterQuery },
  responses: { 200: jsonResponse(NotificationsDeletedSchema, "How many notifications were deleted") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { filter, filters } = c.req.valid("query");
    const given = filter !== undefined || filters !== undefined;
    const result = await deleteNotifications(requestCtx(c), given ? [...(filter ?? []), ...(filters ?? [])] : undefined);
    return c.json(result, 200);
  });
}
