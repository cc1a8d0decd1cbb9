/**
 * The tunnels list built as JSON by the database (issue 14), as the devices
 * summary is (services/devices/summary-json.ts): each row of the facts query
 * (`f`, query.ts) becomes its `Tunnel` or `TunnelSummary` object already,
 * joined by the database into the answer's array (in the page's
 * order, `listTunnelsJson`). A page of 100 tunnels cost the
 * server about 4 ms of CPU as objects (parsing some 50 columns a row, dates,
 * `toTunnel`, `JSON.stringify`, and the garbage of all that).
 *
 * Same values as `toTunnel` (query.ts), which the internal reads keep using;
 * tunnels-list-json.test.ts compares the two over every status, pending
 * reason, peer tunnels, removed interfaces and reported figures:
 * - the status fields are status-sql.ts's mirrors of `deriveTunnelStatus`,
 *   and `pendingReason` joins the ends' reasons with the texts of
 *   `endPendingReason` itself (read from it, with a marker for the name);
 * - the loopbacks follow `tunnelLoopbacks` on the organization's range;
 * - figures are rounded to three decimals as `round` does, from the text of
 *   the stored `real` (what the object path parses), half up;
 * - timestamps are `toISOString`'s form.
 * The text is concatenated (db/json.ts): it differs from JSON.stringify's
 * only inside the thresholds' jsonb (its white space and key order, which the
 * object path has too).
 */
import type { RawBuilder } from "kysely";
import { sql } from "kysely";
import { constantSql } from "../../db/constant-sql.ts";
import { type JsonSql, jsonAsIs, jsonObject, jsonQuoted, jsonString, jsonTimestamp } from "../../db/json.ts";
import { type EndConfigState, type EndConnection, endPendingReason, type TunnelEndFacts } from "./status.ts";
import { isPendingSql, overallStatusSql, tunnelStatusSql } from "./status-sql.ts";

const f = (column: string) => sql.ref(`f.${column}`);

/** `Math.round(n * 1000) / 1000` of the number the `real`'s text reads as. */
const round3 = (column: RawBuilder<unknown>) => sql<number>`floor(${column}::text::float8 * 1000 + 0.5) / 1000`;

/**
 * The organization as a one-row table `r` joined to the facts: its id (`org`) and tunnel range (`net`, for
 * the loopbacks), read once per statement rather than in a statement of their own.
 */
export const tunnelRangeTable = (orgId: string) =>
  sql`(select o.id as org, network(o.tunnel_range::inet) as net from organizations o where o.id = ${orgId}::uuid)`.as("r");

/** `tunnelLoopbacks(range, num)[end]`, '' when the number does not fit the range. */
function loopbackSql(end: 0 | 1): RawBuilder<string> {
  const capacity = sql`floor(2 ^ (32 - masklen(r.net)) / 256)::bigint * 127`;
  return sql<string>`(case when f.num >= 0 and f.num < ${capacity}
    then host(r.net + ((f.num / 127) * 256 + (f.num % 127 + 1) * 2 + ${sql.lit(end)}))
    else '' end)`;
}

const MARK = "\u0000";

/** `endPendingReason` of one end as SQL: its texts, with the end's device name put in. */
function endReasonSql(end: "a" | "b"): RawBuilder<string | null> {
  const facts = (over: Partial<TunnelEndFacts>): TunnelEndFacts => ({
    deviceName: MARK,
    connection: "connected",
    configured: true,
    config: "applied",
    reported: "unknown",
    ...over,
  });
  const name = sql`coalesce(${f(`${end}_name`)}, '')`;
  const text = (over: Partial<TunnelEndFacts>) => {
    const [before, after] = (endPendingReason(facts(over)) ?? "").split(MARK) as [string, string];
    return sql`${sql.lit(before)}::text || ${name} || ${sql.lit(after)}::text`;
  };
  const connection = sql`coalesce(${f(`${end}_connection`)}, ${sql.lit("never" satisfies EndConnection)})`;
  const config = sql`coalesce(${f(`${end}_config`)}, ${sql.lit("applied" satisfies EndConfigState)})`;
  return sql<string | null>`(case when not coalesce(${f(`${end}_configured`)}, false) then ${text({ configured: false })}
    when ${connection} = 'never' then ${text({ connection: "never" })}
    when ${config} = 'in-flight' then ${text({ config: "in-flight" })}
    when ${config} = 'failed' then ${text({ config: "failed" })}
    end)`;
}

const pendingReasonSql = sql<string>`concat_ws('; ', ${endReasonSql("a")},
  case when f.device_b is not null then ${endReasonSql("b")} end)`;

function qualitySql(end: "a" | "b"): JsonSql {
  const c = (name: string) => f(`${end}_${name}`);
  return jsonAsIs(
    sql`case when ${c("at")} is null then null else ${jsonObject({
      loss: jsonAsIs(round3(sql`coalesce(${c("loss")}, 0)`)),
      rtt: jsonAsIs(round3(sql`coalesce(${c("rtt")}, 0)`)),
      jitter: jsonAsIs(round3(sql`coalesce(${c("jitter")}, 0)`)),
      up: jsonAsIs(sql`coalesce(${c("up")}, false)`),
      at: jsonTimestamp(c("at")),
      samples: jsonAsIs(sql`coalesce(${c("samples")}, 0)`),
      windowMs: jsonAsIs(c("window_ms")),
    })} end`,
  );
}

const deviceA = jsonObject({
  id: jsonQuoted(f("device_a")),
  name: jsonString(f("a_name")),
  hostname: jsonString(f("a_hostname")),
});
const deviceB = jsonAsIs(
  sql`case when f.device_b is null then null else ${jsonObject({
    id: jsonQuoted(f("device_b")),
    name: jsonString(sql`coalesce(f.b_name, '')`),
    hostname: jsonString(sql`coalesce(f.b_hostname, '')`),
  })} end`,
);
const peer = jsonAsIs(
  sql`case when f.peer_id is null then null else ${jsonObject({
    id: jsonQuoted(f("peer_id")),
    name: jsonString(sql`coalesce(f.peer_name, '')`),
    remoteIP: jsonString(sql`coalesce(f.peer_remote_ip, '')`),
  })} end`,
);
const interfaceRef = (end: "a" | "b") =>
  jsonObject({
    id: jsonQuoted(f(`interface_${end}`)),
    name: jsonString(sql`coalesce(${f(`${end}_iface_name`)}, '')`),
    IPv4: jsonString(sql`coalesce(${f(`${end}_iface_ipv4`)}, '')`),
  });
const status = {
  tunnelStatus: jsonQuoted(tunnelStatusSql("f")),
  status: jsonQuoted(overallStatusSql("f")),
};

/** A `Tunnel` of facts row `f` (range table `r` beside it) as JSON text, keys in `toTunnel`'s order. */
export const tunnelJson = constantSql(
  jsonObject({
    id: jsonQuoted(f("id")),
    org: jsonQuoted(sql.ref("r.org")),
    num: jsonAsIs(f("num")),
    description: jsonString(f("description")),
    deviceA,
    interfaceA: interfaceRef("a"),
    deviceB,
    interfaceB: jsonAsIs(sql`case when f.interface_b is null then null else ${interfaceRef("b")} end`),
    peer,
    pathlabel: jsonQuoted(f("pathlabel_id")),
    loopbackA: jsonString(loopbackSql(0)),
    loopbackB: jsonString(loopbackSql(1)),
    ...status,
    tunnelStatusA: jsonQuoted(f("a_reported")),
    tunnelStatusB: jsonQuoted(sql`coalesce(f.b_reported, 'unknown')`),
    isPending: jsonAsIs(isPendingSql("f")),
    pendingReason: jsonString(pendingReasonSql),
    notifications: jsonAsIs(f("notifications")),
    quality: jsonObject({ a: qualitySql("a"), b: qualitySql("b") }),
    createdAt: jsonTimestamp(f("created_at")),
  }),
);

/** A `TunnelSummary` of facts row `f` as JSON text, keys in `toTunnelSummary`'s order. */
export const tunnelSummaryJson = constantSql(
  jsonObject({
    id: jsonQuoted(f("id")),
    num: jsonAsIs(f("num")),
    deviceA,
    deviceB,
    peer,
    ...status,
    isPending: jsonAsIs(isPendingSql("f")),
    pendingReason: jsonString(pendingReasonSql),
  }),
);
