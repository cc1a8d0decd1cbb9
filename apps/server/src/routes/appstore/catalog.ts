import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listCatalog } from "../../services/appstore.ts";
import { CatalogAppSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/appstore",
  operationId: "listAppStore",
  tags: ["applications"],
  summary: "The application catalog, with each application's actions",
  auth: { resource: "applications" },
  responses: { 200: jsonResponse(z.array(CatalogAppSchema), "Catalog applications") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(listCatalog(), 200));
}
