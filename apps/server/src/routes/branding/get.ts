import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getBranding } from "../../services/branding/branding.ts";
import { BrandingSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/branding",
  operationId: "getBranding",
  tags: ["branding"],
  summary: "The installation's branding: product name, accent colour, logo URL",
  description:
    "Public: the console's sign-in page shows it before anyone signs in. `logoUrl` carries a version, so it changes with the logo.",
  auth: "public",
  responses: { 200: jsonResponse(BrandingSchema, "The branding (defaults when none was set)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getBranding(c.get("deps").db), 200));
}
