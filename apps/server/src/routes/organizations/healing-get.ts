import { HealingSettings } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getHealingSettings } from "../../services/healing/settings.ts";

export const HealingSettingsSchema = HealingSettings.meta({ id: "HealingSettings" });

export const route = defineRoute({
  method: "get",
  path: "/organizations/{id}/healing",
  operationId: "getOrganizationHealing",
  tags: ["organizations", "healing"],
  summary: "The organization's healing mode: act, suggest or off",
  auth: { resource: "organizations", orgParam: "id" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(HealingSettingsSchema, "The healing mode") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getHealingSettings(requestCtx(c)), 200));
}
