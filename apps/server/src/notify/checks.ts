/**
 * Conditions judged from the database by a periodic duty (once per interval
 * across all server instances), because no single instance sees them whole:
 *
 * - **Device connection**: a device whose link ended (`disconnected_at`) more
 *   than the grace period ago — the `device-connection` rule's
 *   warningThreshold in seconds, 60 by default — is raised once per
 *   disconnection. The disconnected devices are found in `device_disconnects`
 *   (a trigger keeps it, migration 20261207-401), not by reading every
 *   device's row. The instance that saw the link end may be gone by then;
 *   the grace period lives in the database. Resolved when the device says
 *   hello again (the engine, at once), or here when a connected device still
 *   has one open (a resolve that was lost with its instance).
 * - **Pending tunnel**: a tunnel pending (services/tunnels/status.ts) for longer than
 *   TERN_PENDING_TUNNEL_ALERT_S (`tunnels.pending_since` keeps when it started)
 *   is raised with the pending reason; resolved when it is not pending.
 * - Notifications about tunnels or VRRP groups that were deleted are resolved.
 *
 * Device rows are locked `skip locked` in id order before a raise, so a hello
 * committing at the same moment cannot leave a "disconnected" notification
 * open for a connected device.
 */
import type { NotificationRule } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import { anyUuid } from "../services/desired-config.ts";
import { notificationDedupKey } from "../services/notifications/events.ts";
import { completeRules, type FullRules } from "../services/notifications/settings.ts";
import { orgTunnelRange, type TunnelFactsRow, toTunnel, tunnelFacts } from "../services/tunnels/query.ts";
import { isPendingSql } from "../services/tunnels/status-sql.ts";
import type { Announcement, Notifier } from "./notifier.ts";

/** The reference's grace period before a disconnected device is reported. */
export const DEFAULT_DEVICE_GRACE_S = 60;

const ruleField = (event: string, field: keyof NotificationRule) => sql`(s.rules -> ${event}::text ->> ${field}::text)`;

interface DueDisconnect {
  id: string;
  organization_id: string;
  name: string;
  disconnected_at: Date;
  grace: number;
  severity: string | null;
}

/** Of these disconnected devices, those past their grace period with no alert raised since their link ended; locked. */
async function dueDisconnects(trx: Db, ids: string[]): Promise<DueDisconnect[]> {
  const grace = sql<number>`coalesce(${ruleField("device-connection", "warningThreshold")}::float8, ${DEFAULT_DEVICE_GRACE_S})`;
  const { rows } = await sql<DueDisconnect>`select d.id, d.organization_id, d.name, d.disconnected_at, ${grace} as grace,
      ${ruleField("device-connection", "severity")} as severity
    from devices d left join notification_settings s on s.organization_id = d.organization_id
    where d.id = ${anyUuid(ids)}
      and d.connection = 'disconnected' and d.is_approved and d.disconnected_at is not null
      and coalesce(${ruleField("device-connection", "enabled")}::boolean, true)
      and d.disconnected_at <= now() - make_interval(secs => ${grace})
      and not exists (select 1 from notifications n where n.organization_id = d.organization_id
        and n.device_id = d.id and n.event_type = 'device-connection' and not n.resolved
        and n.last_seen_at >= d.disconnected_at)
    order by d.id limit 1000
    for no key update of d skip locked`.execute(trx);
  return rows;
}

export async function checkDeviceConnections(trx: Db, notifier: Notifier): Promise<Announcement[]> {
  const out: Announcement[] = [];
  // The disconnected devices first, on their own (a trigger keeps them, migration 20261207-401): joined in one
  // statement, the planner read every device's row whenever its statistics said few were disconnected, as in a
  // connected fleet.
  const marked = await sql<{ device_id: string }>`select device_id from device_disconnects`.execute(trx);
  const due = marked.rows.length
    ? await dueDisconnects(
        trx,
        marked.rows.map((r) => r.device_id),
      )
    : [];
  for (const d of due) {
    const severity = d.severity === "info" || d.severity === "warning" ? d.severity : "critical";
    out.push(
      ...[
        await notifier.raise(
          trx,
          d.organization_id,
          {
            eventType: "device-connection",
            targets: { deviceId: d.id },
            severity,
            details: `device ${d.name} disconnected at ${d.disconnected_at.toISOString()} and has not come back for ${Math.round(d.grace)} s`,
          },
          d.name,
        ),
      ].filter((a): a is Announcement => a !== null),
    );
  }

  // Connected devices with a connection notification still open: the resolve at hello was lost. From the open
  // notifications, each device looked up by its key (the `limit 1` keeps the planner from flattening the lateral
  // into a join): as a join the planner started from the devices it estimated connected, and with statistics from
  // before a fleet came online (one device connected) it scanned every notification once per device: 2.8 s on
  // PostgreSQL and 3.5-4 s on PGlite at 10,000 devices (3.8 ms this way), holding PGlite's one connection.
  const stale = await sql<{ organization_id: string; device_id: string; name: string }>`select n.organization_id,
      n.device_id, d.name from notifications n
      cross join lateral (select name from devices where id = n.device_id and connection = 'connected' limit 1) d
    where n.event_type = 'device-connection' and not n.resolved limit 1000`.execute(trx);
  for (const n of stale.rows) {
    const key = notificationDedupKey({ eventType: "device-connection", targets: { deviceId: n.device_id } });
    const a = await notifier.resolve(trx, n.organization_id, key, n.name);
    if (a) out.push(a);
  }
  return out;
}

/** Where the pending-tunnel sweep goes on: after tunnel `afterId` of organization `orgId` (organizations and tunnels in id order). */
export interface TunnelSweep {
  orgId: string;
  afterId: string;
}

/**
 * Tunnels the pending-tunnel duty judges per run: a tunnel's facts cost 60–200 µs on PGlite, whose one connection
 * every request waits for while the duty holds it (all 20,000 tunnels of a 10,000-device fleet at once: 1.4–2.4 s;
 * 1,000 a run: 160–220 ms, the p99 of an approval meanwhile). The runs come AGAIN_DELAY_MS apart
 * (gateway/duties.ts): a 20,000-tunnel sweep takes about 25 s, inside the duty's 30 s period.
 */
export const PENDING_TUNNELS_PER_RUN = 100;

/**
 * One slice of the pending-tunnel sweep: at most `limit` tunnels from `from` on (default: all of them, from the
 * first). `next` is where the following slice starts, null when the sweep reached the last tunnel.
 */
export async function checkPendingTunnels(
  trx: Db,
  notifier: Notifier,
  graceMs: number,
  limit = Number.POSITIVE_INFINITY,
  from: TunnelSweep | null = null,
): Promise<{ announcements: Announcement[]; next: TunnelSweep | null }> {
  const out: Announcement[] = [];
  let budget = limit;
  // The organizations that have tunnels, each found by one probe of the tunnels' (organization, num) index: a
  // DISTINCT over the tunnels read all of them at every slice (7 ms of a 35 ms slice at 20,000 tunnels on PGlite).
  let orgsQuery = trx
    .selectFrom("organizations as o")
    .select("o.id as organization_id")
    .where(({ exists, selectFrom }) =>
      exists(selectFrom("tunnels as t").select(sql.lit(1).as("one")).whereRef("t.organization_id", "=", "o.id")),
    )
    .orderBy("o.id");
  if (from) orgsQuery = orgsQuery.where("o.id", ">=", from.orgId);
  for (const { organization_id: orgId } of await orgsQuery.execute()) {
    let slice = trx
      .selectFrom("tunnels")
      .select(["id", "device_a"])
      .where("organization_id", "=", orgId)
      .orderBy("id")
      .$if(Number.isFinite(budget), (q) => q.limit(budget));
    if (from && orgId === from.orgId) slice = slice.where("id", ">", from.afterId);
    const tunnels = await slice.execute();
    if (tunnels.length === 0) continue;
    budget -= tunnels.length;
    out.push(...(await checkSlice(trx, notifier, graceMs, orgId, tunnels)));
    // A full slice may have left tunnels of this organization: the next slice starts after its last.
    if (budget <= 0) return { announcements: out, next: { orgId, afterId: tunnels.at(-1)!.id } };
  }
  return { announcements: out, next: null };
}

/** Marks, raises and resolves for `tunnels` of one organization. */
async function checkSlice(
  trx: Db,
  notifier: Notifier,
  graceMs: number,
  orgId: string,
  tunnels: readonly { id: string; device_a: string }[],
): Promise<Announcement[]> {
  const out: Announcement[] = [];
  const sliceIds = tunnels.map((t) => t.id);
  const keyOf = (t: { id: string; device_a: string }) =>
    notificationDedupKey({ eventType: "pending-tunnel", targets: { deviceId: t.device_a, tunnelId: t.id } });
  const rule = (await orgRules(trx, orgId))["pending-tunnel"];
  const range = await orgTunnelRange(trx, orgId);
  // Only the facts of tunnels the SQL mirror of the status calls pending (or cannot tell: NULL), not
  // every tunnel's; the TypeScript derivation below still decides, so the answer is the same.
  const rows = (await trx
    .selectFrom(tunnelFacts(orgId, { ids: sliceIds }))
    .selectAll()
    .where(sql<boolean>`coalesce(${isPendingSql("f")}, true)`)
    .execute()) as TunnelFactsRow[];
  const pending = rows.map((r) => ({ row: r, tunnel: toTunnel(r, orgId, range) })).filter((x) => x.tunnel.isPending);
  const pendingIds = pending.map((p) => p.row.id);
  await sql`update tunnels set pending_since = now()
    where organization_id = ${orgId}::uuid and id = ${anyUuid(pendingIds)} and pending_since is null`.execute(trx);
  await sql`update tunnels set pending_since = null
    where organization_id = ${orgId}::uuid and id = ${anyUuid(sliceIds)} and pending_since is not null
      and not (id = ${anyUuid(pendingIds)})`.execute(trx);

  // The slice's open alerts (those of deleted tunnels: resolveOrphans).
  const open = new Set(
    (
      await trx
        .selectFrom("notifications")
        .select("dedup_key")
        .where("organization_id", "=", orgId)
        .where("dedup_key", "in", tunnels.map(keyOf))
        .where("event_type", "=", "pending-tunnel")
        // A literal: the partial index of open notifications serves a generic plan only then.
        .where("resolved", "=", sql.lit(false))
        .execute()
    ).map((n) => n.dedup_key),
  );
  const stillPending = new Set<string>();
  for (const { row, tunnel } of pending) {
    const key = keyOf(row);
    stillPending.add(key);
    const since = row.pending_since;
    if (!rule.enabled || open.has(key) || !since || Date.now() - since.getTime() < graceMs) continue;
    const far = tunnel.deviceB?.name ?? tunnel.peer?.name ?? "";
    const a = await notifier.raise(
      trx,
      orgId,
      {
        eventType: "pending-tunnel",
        targets: { deviceId: row.device_a, tunnelId: row.id },
        severity: rule.severity,
        details: `tunnel ${row.num} (${row.a_name} to ${far}) pending since ${since.toISOString()}: ${tunnel.pendingReason}`,
      },
      row.a_name,
    );
    if (a) out.push(a);
  }
  for (const key of open) {
    if (stillPending.has(key)) continue;
    const a = await notifier.resolve(trx, orgId, key);
    if (a) out.push(a);
  }
  return out;
}

/** The organization's rules, read in the duty's transaction (the settings cache reads outside it). */
async function orgRules(trx: Db, orgId: string): Promise<FullRules> {
  const row = await trx
    .selectFrom("notification_settings")
    .select("rules")
    .where("organization_id", "=", orgId)
    .executeTakeFirst();
  return completeRules(row?.rules);
}

/** Open notifications about tunnels or VRRP groups that no longer exist are resolved (without an announcement). */
export async function resolveOrphans(trx: Db): Promise<number> {
  const result = await sql`update notifications n set resolved = true, resolved_at = now()
    where not n.resolved and (
      (n.targets ->> 'tunnelId' is not null
        and not exists (select 1 from tunnels t where t.id::text = n.targets ->> 'tunnelId'))
      or (n.targets ->> 'vrrpGroupId' is not null
        and not exists (select 1 from vrrp_groups g where g.id::text = n.targets ->> 'vrrpGroupId')))`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
