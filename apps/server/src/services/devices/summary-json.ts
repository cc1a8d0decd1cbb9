/**
 * The devices summary page built as JSON by the database (issue 14): each row
 * is its summary object already (db/json.ts's concatenated text, keys in
 * the order `toDeviceSummary` writes them), and the database joins the page's rows
 * into the answer's array too (`runListJson`). The server neither parses the
 * rows' columns (interfaces jsonb and all) nor builds objects nor stringifies
 * them: at 50 concurrent clients that was most of a request's CPU. Same filter, sort, page, cursor and total
 * as `listDevices` (`runList`); devices-list.test.ts compares the two.
 *
 * The JSON differs from JSON.stringify's only in the white space of the
 * interfaces' part; values are the same: booleans, the count as a
 * number, interface fields copied from the stored jsonb (an interface
 * without `isPublicAddressRateLimited`, or with a null, shows false). The
 * interfaces' part is `interfaces_summary`, which a trigger writes with the
 * row's interfaces (migration 20261205-201): mapping them here was most of
 * what a page cost the database.
 */
import { type RawBuilder, sql } from "kysely";
import { constantSql } from "../../db/constant-sql.ts";
import { jsonAsIs, jsonObject, jsonQuoted, jsonString } from "../../db/json.ts";
import { rowCount, rowVersion } from "../../db/row-counts.ts";
import type { ServerListQuery } from "../../http/list-query.ts";
import { runListJson } from "../../http/list-query.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { DEVICE_LIST, pendingNotificationsSql } from "./devices.ts";

const d = (column: string) => sql.ref(`d.${column}`);
const summaryJson = constantSql(
  jsonObject({
    id: jsonQuoted(d("id")),
    name: jsonString(d("name")),
    hostname: jsonString(d("hostname")),
    isApproved: jsonAsIs(d("is_approved")),
    isConnected: jsonAsIs(sql`d.connection = 'connected'`),
    pendingNotifications: jsonAsIs(pendingNotificationsSql),
    tags: jsonAsIs(sql`to_json(d.tags)`),
    interfaces: jsonAsIs(d("interfaces_summary")),
  }),
);

/** A page of device summaries as the JSON text of the answer's array, with the total and the next cursor. */
export function listDeviceSummariesJson(ctx: ServiceCtx, input: DevicesPageInput): Promise<DevicesPageJson> {
  return devicesPageJson(ctx, input, summaryJson);
}

export interface DevicesPageInput {
  query: ServerListQuery;
  ids?: readonly string[];
}

export interface DevicesPageJson {
  json: string;
  total: number;
  next: string | null;
}

/** A page of the organization's devices (`d`), each row's JSON text by `json`, with the total and the next cursor. */
export async function devicesPageJson(
  ctx: ServiceCtx,
  input: DevicesPageInput,
  json: RawBuilder<string>,
): Promise<DevicesPageJson> {
  let base = ctx.db.selectFrom("devices as d").where("d.organization_id", "=", ctx.org.id);
  if (input.ids) base = base.where("d.id", "=", anyUuid(input.ids));
  return runListJson(ctx.db, base.select(json.as("json")), input.query, DEVICE_LIST, {
    total: input.ids ? undefined : rowCount(ctx.org.id, "devices"),
    version: rowVersion(ctx.org.id, "devices"),
  });
}
