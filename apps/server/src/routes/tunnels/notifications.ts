import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateTunnelNotifications } from "../../services/tunnels/notifications.ts";
import { TUNNEL_LIST_KEYS } from "../../services/tunnels/query.ts";
import { TunnelNotificationsResultSchema, TunnelNotificationsUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/tunnels/notifications",
  operationId: "updateTunnelNotifications",
  tags: ["tunnels"],
  summary: "Set round-trip time and drop rate thresholds of the selected tunnels",
  description: `Select tunnels by \`ids\` (each must exist: NOT_FOUND otherwise) or \`filter\` (keys: ${TUNNEL_LIST_KEYS}); both given means tunnels matching both. \`rtt\` (ms) and \`dropRate\` (%) each take {warning, critical} with warning ≤ critical, or null for the organization's notification rules. Stored per tunnel and returned in \`notifications\`; no device job.`,
  auth: { resource: "tunnels" },
  request: { body: jsonBody(TunnelNotificationsUpdateSchema) },
  responses: { 200: jsonResponse(TunnelNotificationsResultSchema, "The tunnels whose thresholds were set") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateTunnelNotifications(requestCtx(c), c.req.valid("json")), 200));
}
