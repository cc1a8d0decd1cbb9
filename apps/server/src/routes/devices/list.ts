import { z } from "@hono/zod-openapi";
import { Id } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { jsonText } from "../../http/json-text.ts";
import { foldListQuery, recordsPageHeaders, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listDevicesJson } from "../../services/devices/detailed-json.ts";
import { DEVICE_LIST_KEYS, listDevices } from "../../services/devices/devices.ts";
import { listDeviceSummariesJson } from "../../services/devices/summary-json.ts";
import { DeviceListQuery, DeviceSchema, DeviceSummarySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices",
  operationId: "listDevices",
  tags: ["devices"],
  summary: "Devices of the organization, in three sizes",
  description: [
    "`response=detailed` (default) answers whole devices, `summary` the list view (name, hostname, approval, connection, pending notifications, interface addresses and rate-limit flags; a fraction of the size), `ids` only the ids.",
    "Every device carries `pendingNotifications` (its unread, unresolved notifications) and each interface `isPublicAddressRateLimited`.",
    `Filter and sort keys: ${DEVICE_LIST_KEYS.join(", ")}. Keys \`interfaces.*\` filter on any interface (\`!=\`/\`!contains\`: no interface matches) and cannot be sorted on. Default sort: name ascending. \`ids=a,b\` narrows to those devices.`,
  ].join("\n\n"),
  auth: { resource: "devices" },
  request: { query: DeviceListQuery },
  responses: {
    200: {
      ...jsonResponse(
        z.union([z.array(DeviceSchema), z.array(DeviceSummarySchema), z.array(Id)]),
        "Devices (detailed), device summaries, or ids, by `response`",
      ),
      headers: recordsPageHeaders,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    if (query.response === "summary") {
      // Built as JSON by the database (services/devices/summary-json.ts): the list view's many requests.
      const page = await listDeviceSummariesJson(requestCtx(c), { query: foldListQuery(query), ids: query.ids });
      withRecordsTotal(c, page.total, page.next);
      return jsonText(c, page.json);
    }
    if (query.response === "detailed") {
      // Built as JSON by the database too (services/devices/detailed-json.ts): a page of 100 is about 156 KB.
      const page = await listDevicesJson(requestCtx(c), { query: foldListQuery(query), ids: query.ids });
      withRecordsTotal(c, page.total, page.next);
      return jsonText(c, page.json);
    }
    const result = await listDevices(requestCtx(c), { query: foldListQuery(query), response: query.response, ids: query.ids });
    withRecordsTotal(c, result.total, result.next);
    return c.json(result.items, 200);
  });
}
