import { z } from "@hono/zod-openapi";
import { jobsLocationHeader, locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateHealingSettings } from "../../services/healing/settings.ts";
import { HealingSettingsSchema } from "./healing-get.ts";

const HealingSettingsUpdatedSchema = HealingSettingsSchema.extend({ jobIds: z.array(z.string()) }).meta({
  id: "HealingSettingsUpdated",
});

export const route = defineRoute({
  method: "put",
  path: "/organizations/{id}/healing",
  operationId: "updateOrganizationHealing",
  tags: ["organizations", "healing"],
  summary: "Choose what healing does: act, suggest (record only) or off",
  description:
    "`act`: devices repair stuck IKE SAs and damp flapping links themselves, the server moves traffic off links that leave their learned baseline and re-applies drifted devices; every action is recorded (GET /healing/actions) and audited. `suggest`: the same actions are only recorded. `off`: nothing is done or recorded (drift is then not re-synced automatically either). Devices learn the mode with their config: when it changes their config, the answer is 202 with their jobs.",
  auth: { resource: "organizations", orgParam: "id" },
  request: { params: IdParams, body: jsonBody(HealingSettingsSchema) },
  responses: {
    200: jsonResponse(HealingSettingsSchema, "The healing mode (no device config changed)"),
    202: {
      ...jsonResponse(HealingSettingsUpdatedSchema, "The healing mode; devices receive it through the jobs in jobIds"),
      headers: jobsLocationHeader,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds, mode } = await updateHealingSettings(requestCtx(c), c.req.valid("json"));
    return jobIds.length ? c.json({ mode, jobIds }, 202, locationOfJobs(c, jobIds)) : c.json({ mode }, 200);
  });
}
