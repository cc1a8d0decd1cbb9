import { jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody } from "../../http/schemas.ts";
import { afterFanOut } from "../../services/fanout/deferred-jobs.ts";
import { uninstallMlPolicy } from "../../services/mlpolicy-install.ts";
import { acceptedFanOut, DeviceSelectionSchema, SELECTION_TEXT } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/mlpolicies/{id}/uninstall",
  operationId: "uninstallMlPolicy",
  tags: ["mlpolicies"],
  summary: "Remove the policy from the selected devices that run it",
  description: `${SELECTION_TEXT} Selected devices that do not run this policy are left alone. 202 with the job ids.`,
  auth: { resource: "mlpolicies" },
  request: { params: IdParams, body: jsonBody(DeviceSelectionSchema) },
  responses: { 202: jobsQueuedResponse },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds } = await uninstallMlPolicy(requestCtx(c), c.req.valid("param").id, c.req.valid("json"));
    // Committed: the devices are compiled after the answer (or before it, on an app without a recompiler).
    await afterFanOut(c.get("deps"));
    return acceptedFanOut(c, jobIds);
  });
}
