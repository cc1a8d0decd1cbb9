/**
 * The detailed devices page (`GET /api/devices`, the default response) built
 * as JSON by the database (issue 14), as the summary page is
 * (summary-json.ts): each row is its `Device` object already, keys in the
 * order `toDevice` writes them, read as text and joined into the answer's
 * array. The server neither parses the rows' five jsonb columns nor builds
 * objects nor stringifies them: that was most of a request's CPU (a page of
 * 100 devices is about 156 KB), and its garbage.
 *
 * Same values as `toDevice` (devices-detailed-json.test.ts compares the two
 * over varied devices and queries): an interface's radio secrets left out as
 * `publicInterface` leaves them out (the field list is its `SECRETS`), an
 * unset or null `isPublicAddressRateLimited` shown false, times as
 * `toISOString` writes them (UTC, milliseconds, truncated as the `pg` driver
 * truncates the stored microseconds). The text differs in white space, and
 * in where an interface that lacked the rate-limit flag shows it (jsonb's key
 * order instead of last).
 */
import { type RawBuilder, sql } from "kysely";
import type { ServerListQuery } from "../../http/list-query.ts";
import { runList } from "../../http/list-query.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { SECRETS } from "../radio/interface-secrets.ts";
import { DEVICE_LIST, pendingNotificationsSql } from "./devices.ts";

/** `toISOString()` of a timestamptz column, in SQL (null stays null). */
const iso = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** `e` (one stored interface) without the encrypted and clear secrets of its lte/wifi object, as `publicInterface`. */
function publicInterfaceSql(): RawBuilder<unknown> {
  let expr = "e";
  for (const [kind, fields] of Object.entries(SECRETS)) {
    const keys = fields.flat().map((k) => `'${k}'`);
    expr = `case when jsonb_typeof(e->'${kind}') = 'object' then jsonb_set(${expr}, '{${kind}}', (e->'${kind}') - array[${keys.join(", ")}]) else ${expr} end`;
  }
  // `iface.isPublicAddressRateLimited ?? false`: a missing key or a JSON null shows false.
  return sql.raw(`(${expr}) || jsonb_build_object('isPublicAddressRateLimited',
    case when coalesce(jsonb_typeof(e->'isPublicAddressRateLimited'), 'null') = 'null' then 'false'::jsonb
    else e->'isPublicAddressRateLimited' end)`);
}

const deviceJson = sql<string>`json_build_object(
    'id', d.id, 'org', d.organization_id, 'name', d.name, 'description', d.description, 'hostname', d.hostname,
    'machineId', d.machine_id, 'isApproved', d.is_approved, 'connection', d.connection,
    'isConnected', d.connection = 'connected',
    'versions', json_build_object('agent', d.agent_version, 'protocol', d.protocol_version),
    'interfaces', (select coalesce(json_agg(${publicInterfaceSql()} order by n), '[]'::json)
      from jsonb_array_elements(d.interfaces) with ordinality as x(e, n)),
    'staticRoutes', d.static_routes, 'dhcp', d.dhcp, 'bgp', d.bgp, 'firewall', d.firewall,
    'deviceSpecificRulesEnabled', d.device_specific_rules_enabled,
    'policies', json_build_object('multilink', d.mlpolicy_id),
    'tags', to_json(d.tags), 'dataPlane', d.data_plane, 'pendingNotifications', ${pendingNotificationsSql},
    'desiredHash', d.desired_hash, 'appliedHash', d.applied_hash,
    'createdAt', ${iso("d.created_at")}, 'updatedAt', ${iso("d.updated_at")},
    'lastConnectedAt', ${iso("d.last_connected_at")}
  )::text`;

/** A page of detailed devices as the JSON text of the answer's array, with the total and the next cursor. */
export async function listDevicesJson(
  ctx: ServiceCtx,
  input: { query: ServerListQuery; ids?: readonly string[] },
): Promise<{ json: string; total: number; next: string | null }> {
  let base = ctx.db.selectFrom("devices as d").where("d.organization_id", "=", ctx.org.id);
  if (input.ids) base = base.where("d.id", "=", anyUuid(input.ids));
  const { rows, total, next } = await runList(ctx.db, base.select(deviceJson.as("j")), input.query, DEVICE_LIST);
  return { json: `[${rows.map((r) => r.j).join(",")}]`, total, next };
}
