import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { API_VERSION, PROTOCOL_VERSION, SERVER_VERSION } from "../../version.ts";

const Version = z
  .object({
    server: z.string().meta({ description: "Version of the management server" }),
    api: z.number().int().meta({ description: "REST API version; raised on a backward-incompatible change" }),
    protocol: z.number().int().meta({ description: "Device websocket protocol version (PROTOCOL_VERSION)" }),
  })
  .meta({ id: "Version" });

export const route = defineRoute({
  method: "get",
  path: "/version",
  operationId: "getVersion",
  tags: ["system"],
  summary: "Server, API and device protocol versions",
  auth: "public",
  responses: { 200: jsonResponse(Version, "Versions") },
});

export function register(app: ApiApp) {
  app.openapi(route, (c) => c.json({ server: SERVER_VERSION, api: API_VERSION, protocol: PROTOCOL_VERSION }, 200));
}
