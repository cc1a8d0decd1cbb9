/**
 * `deriveTunnelStatus` (status.ts) as SQL expressions, so lists can
 * filter and sort on `tunnelStatus`, `status` and `isPending` in the database.
 * They read the fact columns of the tunnel facts query (`a_configured`,
 * `a_connection`, `a_config`, `a_reported`, the same for `b_`, and `peer_id`).
 * A test evaluates both over every combination of facts; change them together.
 */
import { type RawBuilder, sql } from "kysely";

const col = (alias: string, name: string) => sql.ref(`${alias}.${name}`);

function endPending(alias: string, end: "a" | "b"): RawBuilder<boolean> {
  return sql<boolean>`(not ${col(alias, `${end}_configured`)} or ${col(alias, `${end}_connection`)} = 'never' or ${col(alias, `${end}_config`)} <> 'applied')`;
}

/** True when any end is pending. */
export function isPendingSql(alias: string): RawBuilder<boolean> {
  return sql<boolean>`(${endPending(alias, "a")} or (${col(alias, "peer_id")} is null and ${endPending(alias, "b")}))`;
}

/** Connected | Not Connected | Pending. */
export function tunnelStatusSql(alias: string): RawBuilder<string> {
  return sql<string>`(case when ${isPendingSql(alias)} then 'Pending'
    when ${col(alias, "a_reported")} = 'up' and (${col(alias, "peer_id")} is not null or ${col(alias, "b_reported")} = 'up') then 'Connected'
    else 'Not Connected' end)`;
}

/** tunnelStatus, or N/A when a device end is not connected. */
export function overallStatusSql(alias: string): RawBuilder<string> {
  return sql<string>`(case when ${col(alias, "a_connection")} <> 'connected'
      or (${col(alias, "peer_id")} is null and ${col(alias, "b_connection")} <> 'connected') then 'N/A'
    else ${tunnelStatusSql(alias)} end)`;
}
