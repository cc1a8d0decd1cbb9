import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { readDeviceLogs } from "../../services/devices/diagnostics/read-logs.ts";
import { DeviceLogsSchema, LOGS_AUTH, LogsQuerySchema } from "./diagnostics-schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/logs",
  operationId: "getDeviceLogs",
  tags: ["devices"],
  summary: "The last lines of the device agent's log, filtered by level",
  description:
    "Asked of the agent over its link (`log-read`): it reads its log file (`<stateDir>/logs/agent.log`, then the rotated `agent.log.1`) backwards and answers the last `lines` lines of `level` and above, oldest first, as the pino JSON lines it wrote. An answer larger than 768 KiB keeps the newest lines and says `truncated: true`. 409 DEVICE_NOT_CONNECTED when no instance holds the device's link; 502 DEVICE_REQUEST_FAILED when the agent cannot answer (an agent older than this API). Audited. Managers and owners (devices `post`, like dumps): the log shows as much of the router as a dump.",
  auth: LOGS_AUTH,
  errors: ["DEVICE_NOT_CONNECTED", "DEVICE_TIMEOUT", "DEVICE_REQUEST_FAILED"],
  request: { params: IdParams, query: LogsQuerySchema },
  responses: { 200: jsonResponse(DeviceLogsSchema, "The log lines") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const logs = await readDeviceLogs(requestCtx(c), c.get("deps"), c.req.valid("param").id, c.req.valid("query"));
    return c.json(logs, 200);
  });
}
