import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { setLogo } from "../../services/branding/branding.ts";
import { BrandingSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/branding/logo",
  operationId: "deleteBrandingLogo",
  tags: ["branding"],
  summary: "Remove the logo (installation administrators)",
  auth: "installation",
  responses: { 200: jsonResponse(BrandingSchema, "The branding without a logo") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await setLogo(c.get("deps").db, null), 200));
}
