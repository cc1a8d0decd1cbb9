import { jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import { afterFanOut } from "../../services/fanout/deferred-jobs.ts";
import { installMlPolicy } from "../../services/mlpolicy-install.ts";
import { acceptedFanOut, DeviceSelectionSchema, SELECTION_TEXT } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/mlpolicies/{id}/install",
  operationId: "installMlPolicy",
  tags: ["mlpolicies"],
  summary: "Install the policy on many devices at once (one mlpolicy job per device whose policy changes)",
  description: `${SELECTION_TEXT} Devices running another policy switch to this one. Unknown device ids: 404 naming them, nothing changes. 202 with the job ids; Location lists them (at most 100) or names their job group (/api/jobs?group=<id>).`,
  auth: { resource: "mlpolicies" },
  request: { params: IdParams, body: jsonBody(DeviceSelectionSchema) },
  responses: { 202: jobsQueuedResponse },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds } = await installMlPolicy(requestCtx(c), c.req.valid("param").id, c.req.valid("json"));
    // Committed: the devices are compiled after the answer (or before it, on an app without a recompiler).
    await afterFanOut(c.get("deps"));
    return acceptedFanOut(c, jobIds);
  });
}
