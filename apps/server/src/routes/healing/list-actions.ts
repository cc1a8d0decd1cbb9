/** GET /api/healing/actions: what healing did or suggested, with its evidence (docs/healing.md). */
import { z } from "@hono/zod-openapi";
import { HealingAction, HealingKind, Id, Timestamp } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listHealingActions } from "../../services/healing/actions.ts";

const HealingActionSchema = HealingAction.meta({ id: "HealingAction" });

const Query = ListQuerySchema.extend({
  deviceId: Id.optional().meta({ description: "Only actions about this device" }),
  tunnelId: Id.optional().meta({ description: "Only actions about this tunnel" }),
  kind: HealingKind.optional().meta({ description: "Only actions of this kind" }),
  since: Timestamp.optional().meta({ description: "Only actions at or after this time" }),
  until: Timestamp.optional().meta({ description: "Only actions before this time" }),
});

export const route = defineRoute({
  method: "get",
  path: "/healing/actions",
  operationId: "listHealingActions",
  tags: ["healing"],
  summary: "Healing actions taken or suggested, with their figures before and after",
  description:
    "Newest first by default. `mode` is `act` (done) or `suggest` (only recorded: the organization's healing mode is `suggest`); `source` says whether the device did it by itself (stuck SA re-initiated, flapping link damped) or the server decided it (traffic moved off a link that left its learned baseline, drifted device re-applied). Each action is also in the audit log (resource `healing`). Filter and sort keys besides the parameters: id, at, kind, mode, source, deviceId, tunnelId, link.",
  auth: { resource: "devices" },
  request: { query: Query },
  responses: { 200: { ...jsonResponse(z.array(HealingActionSchema), "Healing actions"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { deviceId, tunnelId, kind, since, until, ...list } = c.req.valid("query");
    const { items, total } = await listHealingActions(
      requestCtx(c),
      { deviceId, tunnelId, kind, since, until },
      foldListQuery(list),
    );
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
