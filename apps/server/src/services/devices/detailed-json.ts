/**
 * The detailed devices page (`GET /api/devices`, the default response) built
 * as JSON by the database (issue 14), as the summary page is
 * (summary-json.ts): each row is its `Device` object already, keys in the
 * order `toDevice` writes them (db/json.ts's concatenated text), joined into
 * the answer's array (`runListJson`). The server neither parses the rows'
 * five jsonb columns and three dates nor builds objects nor stringifies a
 * page of about 156 KB: that was 5 ms of server CPU a request, against 1 ms
 * of PostgreSQL. An earlier try built the objects with `json_build_object`
 * and cost PostgreSQL more than it saved the server (docs/bench.md).
 *
 * Same values as `toDevice` (devices-detailed-json.test.ts compares the two
 * over varied devices and queries): an interface's radio secrets left out as
 * `publicInterface` leaves them out (the field list is its `SECRETS`), an
 * unset or null `isPublicAddressRateLimited` shown false, times as
 * `toISOString` writes them. The text differs inside the stored jsonb (white
 * space, key order) and in where an interface that lacked the rate-limit flag
 * shows it (last, as jsonb orders a new key, rather than where the object
 * path appends it).
 */
import { sql } from "kysely";
import { constantSql } from "../../db/constant-sql.ts";
import { jsonAsIs, jsonObject, jsonQuoted, jsonString, jsonTimestamp } from "../../db/json.ts";
import type { ServiceCtx } from "../context.ts";
import { SECRETS } from "../radio/interface-secrets.ts";
import { pendingNotificationsSql } from "./devices.ts";
import { type DevicesPageInput, type DevicesPageJson, devicesPageJson } from "./summary-json.ts";

/** `e` (one stored interface) as `readInterface` shows it: no secrets in its lte/wifi object, the rate-limit flag false when unset. */
function publicInterfaceSql(): string {
  let expr = "e";
  for (const [kind, fields] of Object.entries(SECRETS)) {
    const keys = fields.flat().map((k) => `'${k}'`);
    expr = `case when jsonb_typeof(e->'${kind}') = 'object' then jsonb_set(${expr}, '{${kind}}', (e->'${kind}') - array[${keys.join(", ")}]) else ${expr} end`;
  }
  // `iface.isPublicAddressRateLimited ?? false`: a missing key or a JSON null shows false.
  return `(${expr}) || jsonb_build_object('isPublicAddressRateLimited',
    case when coalesce(jsonb_typeof(e->'isPublicAddressRateLimited'), 'null') = 'null' then 'false'::jsonb
    else e->'isPublicAddressRateLimited' end)`;
}

const d = (column: string) => sql.ref(`d.${column}`);

const deviceJson = constantSql(
  jsonObject({
    id: jsonQuoted(d("id")),
    org: jsonQuoted(d("organization_id")),
    name: jsonString(d("name")),
    description: jsonString(d("description")),
    hostname: jsonString(d("hostname")),
    machineId: jsonString(d("machine_id")),
    isApproved: jsonAsIs(d("is_approved")),
    connection: jsonString(d("connection")),
    isConnected: jsonAsIs(sql`d.connection = 'connected'`),
    versions: jsonObject({ agent: jsonString(d("agent_version")), protocol: jsonAsIs(d("protocol_version")) }),
    interfaces: jsonAsIs(sql`(select coalesce(json_agg(${sql.raw(publicInterfaceSql())} order by n), '[]'::json)
      from jsonb_array_elements(d.interfaces) with ordinality as x(e, n))`),
    staticRoutes: jsonAsIs(d("static_routes")),
    dhcp: jsonAsIs(d("dhcp")),
    bgp: jsonAsIs(d("bgp")),
    firewall: jsonAsIs(d("firewall")),
    deviceSpecificRulesEnabled: jsonAsIs(d("device_specific_rules_enabled")),
    policies: jsonObject({ multilink: jsonQuoted(d("mlpolicy_id")) }),
    tags: jsonAsIs(sql`to_json(d.tags)`),
    dataPlane: jsonString(d("data_plane")),
    pendingNotifications: jsonAsIs(pendingNotificationsSql),
    desiredHash: jsonString(d("desired_hash")),
    appliedHash: jsonString(d("applied_hash")),
    createdAt: jsonTimestamp(d("created_at")),
    updatedAt: jsonTimestamp(d("updated_at")),
    lastConnectedAt: jsonTimestamp(d("last_connected_at")),
  }),
);

/** A page of detailed devices as the JSON text of the answer's array, with the total and the next cursor. */
export function listDevicesJson(ctx: ServiceCtx, input: DevicesPageInput): Promise<DevicesPageJson> {
  return devicesPageJson(ctx, input, deviceJson);
}
