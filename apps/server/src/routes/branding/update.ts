import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateBranding } from "../../services/branding/branding.ts";
import { BrandingSchema, BrandingUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/branding",
  operationId: "updateBranding",
  tags: ["branding"],
  summary: "Set the product name and/or accent colour (installation administrators)",
  description:
    "Installation-wide, so only for installation administrators: owners of the installation's first account (the one made at first start). Access tokens and other accounts' owners get 403 FORBIDDEN.",
  auth: "installation",
  request: { body: jsonBody(BrandingUpdateSchema) },
  responses: { 200: jsonResponse(BrandingSchema, "The branding now") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateBranding(c.get("deps").db, c.req.valid("json")), 200));
}
