/**
 * The path from database rows to device work: load what the compile step
 * needs for a set of devices (in a handful of queries, whatever the number of
 * devices), compile each device's desired config, store it with its hash, and
 * queue one job per device whose desired config changed. Runs inside the
 * transaction of the change that caused it, so a change and its jobs commit
 * together. The dispatcher (device gateway) sends the jobs.
 */
import { randomUUID } from "node:crypto";
import type { ConfigMonitoring, ConfigRemoteVpn, JobTask, JobType } from "@tern/protocol";
import { sql, type UpdateObject } from "kysely";
import { loadRemoteVpnConfigs, REMOTE_VPN_APP_ID } from "../appstore/apps/remote-vpn/device-config.ts";
import {
  type CompileInput,
  type CompilePeer,
  type CompileTunnel,
  type CompileVrrpGroup,
  type CompileWarning,
  compileDeviceConfig,
  type TunnelEndDevice,
} from "../compile/index.ts";
import type { ServerConfig } from "../config.ts";
import { toJson } from "../db/json.ts";
import type { Database, Db, DeviceRow, MlPolicyRow, OrganizationRow, TunnelRow } from "../db/schema.ts";
import type { Keyring } from "../secrets/keyring.ts";
import type { ServiceCtx } from "./context.ts";
import { sealDesiredConfig } from "./desired-config-seal.ts";
import { storedPeerConfig } from "./peers/stored-config.ts";
import { openInterfaceSecrets } from "./radio/interface-secrets.ts";

/** `= any($1)` for a uuid list: one parameter, whatever the list length. */
export const anyUuid = (ids: readonly string[]) => sql<string>`any(${toPgArray(ids)}::uuid[])`;
/** A uuid list as one array parameter's text (`$1::uuid[]`). */
export const toPgArray = (ids: readonly string[]) => `{${ids.join(",")}}`;

/**
 * The rows of `deviceIds`, locked in id order (add the columns with `.select`): every writer of
 * several device rows locks them this way, so two of them cannot deadlock.
 */
export function lockDevices(db: Db, deviceIds: readonly string[]) {
  return db.selectFrom("devices").where("id", "=", anyUuid(deviceIds)).orderBy("id").forNoKeyUpdate();
}

const DEVICE_COLUMNS = [
  "id",
  "name",
  "interfaces",
  "static_routes",
  "dhcp",
  "bgp",
  "firewall",
  "device_specific_rules_enabled",
  "mlpolicy_id",
] as const;
type DeviceConfigRow = Pick<DeviceRow, (typeof DEVICE_COLUMNS)[number]>;
/** The columns of a device row queueConfigJobs reads under its lock (`QueueJobsInput.locked` carries them). */
export const LOCKED_CONFIG_COLUMNS = [...DEVICE_COLUMNS, "desired_hash", "desired_stale"] as const;
/** A device row as queueConfigJobs reads it under its lock. */
export type LockedConfigRow = DeviceConfigRow & Pick<DeviceRow, "desired_hash" | "desired_stale">;

function toCompileDevice(row: DeviceConfigRow): CompileInput["device"] {
  return {
    id: row.id,
    name: row.name,
    interfaces: row.interfaces,
    staticRoutes: row.static_routes,
    dhcp: row.dhcp,
    bgp: row.bgp,
    firewall: row.firewall,
    deviceSpecificRulesEnabled: row.device_specific_rules_enabled,
    policies: { multilink: row.mlpolicy_id },
  };
}

/** Decrypts a peer's stored PSK and rebuilds its PeerCreate shape. */
export function toCompilePeer(
  keyring: Keyring,
  row: { id: string; name: string; config: Record<string, unknown>; psk_enc: string },
): CompilePeer {
  return { ...storedPeerConfig(row.config), name: row.name, id: row.id, psk: keyring.decrypt(row.psk_enc, row.id) };
}

/**
 * What the compile reads around the devices it compiles: their organization, tunnels with the far ends and peers,
 * VRRP groups, multi-link policies, the links the healing monitor steers off, the remote VPN. Loaded once per
 * change: `updateDevice` validates against it and hands it to queueConfigJobs, which then reads only the devices.
 */
export interface CompileSurroundings {
  /** The devices it was loaded for: queueConfigJobs loads its own for another set. */
  deviceIds: ReadonlySet<string>;
  org: Pick<OrganizationRow, "id" | "tunnel_range" | "healing_mode">;
  pathLabels: { id: string }[];
  tunnels: SurroundingTunnel[];
  /** The tunnels' ends that are not among `deviceIds`, by id. */
  farEnds: Map<string, TunnelEndDevice>;
  peers: Map<string, CompilePeer>;
  vrrpGroups: CompileVrrpGroup[];
  policies: Map<string, Pick<MlPolicyRow, "id" | "rules">>;
  /** Links the healing monitor steers traffic off (degraded against their baseline), per device. */
  avoidOf: Map<string, string[]>;
  remoteVpn: Map<string, ConfigRemoteVpn>;
}

/** Everything `compileDeviceConfig` needs for each of `deviceIds` (devices of other organizations are ignored). */
export async function loadCompileInputs(
  db: Db,
  keyring: Keyring,
  orgId: string,
  deviceIds: readonly string[],
  monitoring?: Partial<ConfigMonitoring>,
): Promise<Map<string, CompileInput>> {
  if (deviceIds.length === 0) return new Map();
  const devices = await db
    .selectFrom("devices")
    .select(DEVICE_COLUMNS)
    .where("organization_id", "=", orgId)
    .where("id", "=", anyUuid(deviceIds))
    .execute();
  if (devices.length === 0) return new Map();
  return compileInputsOf(keyring, await loadCompileSurroundings(db, keyring, orgId, devices), devices, monitoring);
}

/** The columns of a tunnel the compile and the device checks read. */
const TUNNEL_COLUMNS = [
  "id",
  "num",
  "device_a",
  "interface_a",
  "device_b",
  "interface_b",
  "peer_id",
  "pathlabel_id",
  "psk_enc",
] as const;
export type SurroundingTunnel = Pick<TunnelRow, (typeof TUNNEL_COLUMNS)[number]>;

/** `json_build_object('a', t.a, …)` of `columns` of the row `alias`. */
const jsonOf = (alias: string, columns: readonly string[]) =>
  sql.raw(`json_build_object(${columns.map((c) => `'${c}', ${alias}.${c}`).join(", ")})`);

/**
 * The surroundings of `devices` (rows of `orgId`). One statement reads the organization, its path label ids,
 * whether it runs the remote VPN, the devices' tunnels with their far ends, their VRRP group ids and the links
 * the healing monitor steers off (each a round trip of its own before: an approval is bound by round trips,
 * not by PostgreSQL's work). Peers, VRRP groups, multi-link policies and the remote VPN follow only when there
 * are any, one statement each, whatever the number of devices.
 */
export async function loadCompileSurroundings(
  db: Db,
  keyring: Keyring,
  orgId: string,
  devices: readonly Pick<DeviceConfigRow, "id" | "mlpolicy_id">[],
): Promise<CompileSurroundings> {
  const ids = devices.map((d) => d.id);
  const deviceIds = new Set(ids);
  const idList = sql`${toPgArray(ids)}::uuid[]`;
  const { rows } = await sql<{
    id: string;
    tunnel_range: string;
    healing_mode: OrganizationRow["healing_mode"];
    label_ids: string[];
    remote_vpn: boolean;
    tunnels: SurroundingTunnel[];
    far_ends: DeviceConfigRow[];
    vrrp_group_ids: string[];
    avoid: { device_id: string; link: string }[];
  }>`with t as (
      select ${sql.join(TUNNEL_COLUMNS.map((c) => sql.ref(`tunnels.${c}`)))} from tunnels
      where organization_id = ${orgId} and (device_a = any(${idList}) or device_b = any(${idList})))
    select o.id, o.tunnel_range, o.healing_mode,
      array(select l.id from path_labels l where l.organization_id = o.id) as label_ids,
      exists(select 1 from purchased_apps p where p.organization_id = o.id and p.app_id = ${REMOTE_VPN_APP_ID}) as remote_vpn,
      coalesce((select json_agg(${jsonOf("t", TUNNEL_COLUMNS)}) from t), '[]') as tunnels,
      coalesce((select json_agg(${jsonOf("d", DEVICE_COLUMNS)}) from devices d
        where d.organization_id = o.id and d.id <> all(${idList}) and d.id = any(array(
          select e from t, unnest(array[t.device_a, t.device_b]) as e where e is not null))), '[]') as far_ends,
      array(select distinct m.group_id from vrrp_members m join vrrp_groups g on g.id = m.group_id
        where g.organization_id = o.id and m.device_id = any(${idList})) as vrrp_group_ids,
      case when o.healing_mode = 'act' then coalesce((select json_agg(json_build_object('device_id', b.device_id,
        'link', b.link)) from healing_baselines b where b.device_id = any(${idList}) and b.rerouting), '[]')
        else '[]' end as avoid
    from organizations o where o.id = ${orgId}`.execute(db);
  const org = rows[0];
  if (!org) throw new Error(`organization ${orgId} not found`);
  const farEnds = new Map<string, TunnelEndDevice>(org.far_ends.map((d) => [d.id, toCompileDevice(d)]));
  const peerIds = [...new Set(org.tunnels.map((t) => t.peer_id).filter((id): id is string => !!id))];
  const peers = new Map<string, CompilePeer>();
  if (peerIds.length)
    for (const row of await db
      .selectFrom("peers")
      .selectAll()
      .where("organization_id", "=", orgId)
      .where("id", "=", anyUuid(peerIds))
      .execute())
      peers.set(row.id, toCompilePeer(keyring, row));
  const avoidOf = new Map<string, string[]>();
  for (const r of org.avoid) avoidOf.set(r.device_id, [...(avoidOf.get(r.device_id) ?? []), r.link]);
  return {
    deviceIds,
    org: { id: org.id, tunnel_range: org.tunnel_range, healing_mode: org.healing_mode },
    pathLabels: org.label_ids.map((id) => ({ id })),
    tunnels: org.tunnels,
    farEnds,
    peers,
    vrrpGroups: await loadVrrpGroupsById(db, org.vrrp_group_ids),
    policies: await loadPolicies(db, orgId, devices, new Map()),
    avoidOf,
    remoteVpn: org.remote_vpn ? await loadRemoteVpnConfigs(db, keyring, orgId, ids) : new Map(),
  };
}

/** `known` with the multi-link policies of `devices` it lacks (one statement, none when it lacks none). */
async function loadPolicies(
  db: Db,
  orgId: string,
  devices: readonly Pick<DeviceConfigRow, "mlpolicy_id">[],
  known: ReadonlyMap<string, Pick<MlPolicyRow, "id" | "rules">>,
): Promise<Map<string, Pick<MlPolicyRow, "id" | "rules">>> {
  const policies = new Map(known);
  const missing = [...new Set(devices.map((d) => d.mlpolicy_id).filter((id): id is string => !!id && !policies.has(id)))];
  if (missing.length)
    for (const p of await db
      .selectFrom("mlpolicies")
      .select(["id", "rules"])
      .where("organization_id", "=", orgId)
      .where("id", "=", anyUuid(missing))
      .execute())
      policies.set(p.id, p);
  return policies;
}

/** Each device's compile input, from its row as it now reads and the surroundings loaded for it. */
function compileInputsOf(
  keyring: Keyring,
  around: CompileSurroundings,
  devices: readonly DeviceConfigRow[],
  monitoring?: Partial<ConfigMonitoring>,
): Map<string, CompileInput> {
  const result = new Map<string, CompileInput>();
  const known = new Map<string, TunnelEndDevice>(around.farEnds);
  for (const d of devices) known.set(d.id, toCompileDevice(d));
  // Maps by device id, so a fan-out to thousands of devices stays linear (no list scan per tunnel or per device).
  const compiled = new Set(devices.map((d) => d.id));
  const tunnelsOf = new Map<string, CompileTunnel[]>();
  for (const t of around.tunnels) {
    const input = toCompileTunnel(keyring, t, known, around.peers);
    if (!input) continue;
    for (const end of t.device_b === t.device_a ? [t.device_a] : [t.device_a, t.device_b]) {
      if (!end || !compiled.has(end)) continue;
      const list = tunnelsOf.get(end);
      if (list) list.push(input);
      else tunnelsOf.set(end, [input]);
    }
  }
  const groupsOf = new Map<string, CompileVrrpGroup[]>();
  for (const g of around.vrrpGroups) {
    for (const member of new Set(g.devices.map((m) => m.device))) {
      const list = groupsOf.get(member);
      if (list) list.push(g);
      else groupsOf.set(member, [g]);
    }
  }
  const { org } = around;
  for (const d of devices) {
    const device = toCompileDevice(d);
    result.set(d.id, {
      // The device's own radio secrets in clear: its config carries them (sealed at rest as a whole).
      device: { ...device, interfaces: device.interfaces.map((i) => openInterfaceSecrets(keyring, d.id, i)) },
      organization: { id: org.id, tunnelRange: org.tunnel_range },
      tunnels: tunnelsOf.get(d.id) ?? [],
      vrrpGroups: groupsOf.get(d.id) ?? [],
      multiLinkPolicy: d.mlpolicy_id ? (around.policies.get(d.mlpolicy_id) ?? null) : null,
      pathLabels: around.pathLabels,
      healing: { mode: org.healing_mode, avoid: around.avoidOf.get(d.id) ?? [] },
      ...(monitoring ? { monitoring } : {}),
      ...(around.remoteVpn.has(d.id) ? { remoteVpn: around.remoteVpn.get(d.id) } : {}),
    });
  }
  return result;
}

function toCompileTunnel(
  keyring: Keyring,
  t: SurroundingTunnel,
  devices: Map<string, TunnelEndDevice>,
  peers: Map<string, CompilePeer>,
): CompileTunnel | null {
  const a = devices.get(t.device_a);
  if (!a) return null;
  const common = { id: t.id, num: t.num, pathlabel: t.pathlabel_id };
  if (t.peer_id) {
    const peer = peers.get(t.peer_id);
    return peer ? { ...common, kind: "peer", a: { device: a, interfaceId: t.interface_a }, peer } : null;
  }
  const b = t.device_b ? devices.get(t.device_b) : undefined;
  if (!b || !t.interface_b || !t.psk_enc) return null;
  return {
    ...common,
    kind: "device",
    a: { device: a, interfaceId: t.interface_a },
    b: { device: b, interfaceId: t.interface_b },
    psk: keyring.decrypt(t.psk_enc, t.id),
  };
}

/** The VRRP groups any of `deviceIds` is a member of, with all their members in the admin's order. */
export async function loadVrrpGroups(db: Db, orgId: string, deviceIds: readonly string[]): Promise<CompileVrrpGroup[]> {
  const groupIds = (
    await db
      .selectFrom("vrrp_members")
      .innerJoin("vrrp_groups", "vrrp_groups.id", "vrrp_members.group_id")
      .select("vrrp_members.group_id")
      .distinct()
      .where("vrrp_groups.organization_id", "=", orgId)
      .where("vrrp_members.device_id", "=", anyUuid(deviceIds))
      .execute()
  ).map((r) => r.group_id);
  return loadVrrpGroupsById(db, groupIds);
}

/** The VRRP groups `groupIds` (of one organization), with all their members in the admin's order. */
async function loadVrrpGroupsById(db: Db, groupIds: readonly string[]): Promise<CompileVrrpGroup[]> {
  if (groupIds.length === 0) return [];
  const groups = await db.selectFrom("vrrp_groups").selectAll().where("id", "=", anyUuid(groupIds)).execute();
  const members = await db
    .selectFrom("vrrp_members")
    .selectAll()
    .where("group_id", "=", anyUuid(groupIds))
    .orderBy("group_id")
    .orderBy("position")
    .execute();
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    virtualRouterId: g.virtual_router_id,
    virtualIp: g.virtual_ip,
    preemption: g.preemption,
    acceptMode: g.accept_mode,
    advertIntervalMs: g.advert_interval_ms,
    devices: members
      .filter((m) => m.group_id === g.id)
      .map((m) => ({
        device: m.device_id,
        interface: m.interface,
        priority: m.priority,
        trackInterfacesOptional: m.track_optional,
        trackInterfacesMandatory: m.track_mandatory,
      })),
  }));
}

export interface QueueJobsInput {
  deviceIds: readonly string[];
  type: JobType;
  /** The tasks recorded on each device's job (what the admin changed). */
  tasks: JobTask[] | ((deviceId: string) => JobTask[]);
  /**
   * Queue a job even when the device's desired config did not change (e.g. an
   * explicit sync). Default: only devices whose desired hash changed get one.
   */
  force?: boolean;
  /**
   * Queue no job at all, only recompile and store (the fan-out recompiler: its jobs were queued before, without a
   * target, and get their target here). Default true.
   */
  queue?: boolean;
  /**
   * The surroundings already loaded for exactly `deviceIds` in this transaction (services/devices/update.ts loads
   * them to validate the change); loaded here when absent or loaded for other devices.
   */
  surroundings?: CompileSurroundings;
  /**
   * The rows of exactly `deviceIds` as they now read, locked by the caller in this transaction
   * (services/devices/update.ts holds its device FOR UPDATE and hands it as its change makes it): not locked and
   * read again.
   */
  locked?: readonly LockedConfigRow[];
  /**
   * With one `locked` device: the columns the caller changes on it, written in the same UPDATE as its desired
   * config (one statement for the change and its compile; alone when the config is unchanged). The result then
   * carries the row's new `updated_at`.
   */
  rowChanges?: UpdateObject<Database, "devices">;
  /**
   * Columns set to the same value on every device of `deviceIds` (a bulk approval's `is_approved`), in the UPDATE
   * that stores its desired config; a device whose config is unchanged gets them in one UPDATE of its own.
   */
  alsoSet?: Partial<Pick<DeviceRow, "is_approved">>;
}

export interface QueuedJobs {
  jobIds: string[];
  /** The device of each job, in the order of `jobIds`. */
  jobDevices: string[];
  /** The desired hash each device now has (compiled here). */
  hashes: Map<string, string>;
  /** Compile warnings per device (e.g. a tunnel left out because an end has no address). */
  warnings: Map<string, CompileWarning[]>;
  /** With `rowChanges`: the device's `updated_at` as written. */
  updatedAt?: Date;
}

/** The probing every compiled config gets: the server's settings (`TERN_PROBE_*`, docs/server.md). */
function monitoringOf(config: Pick<ServerConfig, "TERN_PROBE_INTERVAL_MS" | "TERN_PROBE_WINDOW">): Partial<ConfigMonitoring> {
  return { probeIntervalMs: config.TERN_PROBE_INTERVAL_MS, windowSize: config.TERN_PROBE_WINDOW };
}

/** Hook the device gateway installs to wake its dispatcher after the transaction commits. */
export type JobsQueuedListener = (orgId: string, deviceIds: string[]) => void;

/**
 * Recompiles the desired config of `deviceIds` and queues a job for each
 * device whose config changed (or every device, with `force`). Must run inside
 * the transaction of the change.
 */
export async function queueConfigJobs(ctx: ServiceCtx, input: QueueJobsInput): Promise<QueuedJobs> {
  if (!ctx.db.isTransaction) throw new Error("queueConfigJobs must run inside the transaction of the change (inTransaction)");
  const warnings = new Map<string, CompileWarning[]>();
  const jobIds: string[] = [];
  const jobDevices: string[] = [];
  const hashes = new Map<string, string>();
  const ids = [...new Set(input.deviceIds)];
  if (ids.length === 0) return { jobIds, jobDevices, warnings, hashes };
  // Lock the devices first, in id order: every writer of device rows that locks several in the
  // same order (the device gateway does too) cannot deadlock with another.
  // The same statement reads what the compile needs of them, as they now read.
  const given = input.locked;
  const wanted = new Set(ids);
  const locked: readonly LockedConfigRow[] =
    given && given.length === ids.length && given.every((d) => wanted.has(d.id))
      ? given
      : await lockDevices(ctx.db, ids).select(LOCKED_CONFIG_COLUMNS).where("organization_id", "=", ctx.org.id).execute();
  const current = new Map(locked.map((d) => [d.id, d.desired_hash]));
  // Devices a fan-out marked stale (services/fanout): stored again even when the hash is the same, so the mark clears
  // and their target-less jobs get this hash.
  const stale = new Set(locked.filter((d) => d.desired_stale).map((d) => d.id));
  const loaded = input.surroundings;
  const around =
    locked.length === 0
      ? null
      : loaded && loaded.deviceIds.size === locked.length && locked.every((d) => loaded.deviceIds.has(d.id))
        ? // A change may have set a multi-link policy the surroundings were not loaded with.
          { ...loaded, policies: await loadPolicies(ctx.db, ctx.org.id, locked, loaded.policies) }
        : await loadCompileSurroundings(ctx.db, ctx.keyring, ctx.org.id, locked);
  const inputs = around
    ? compileInputsOf(ctx.keyring, around, locked, monitoringOf(ctx.config))
    : new Map<string, CompileInput>();
  const jobs: { id: string; deviceId: string; hash: string; sealed: string; tunnelIds: string }[] = [];
  const unchangedForced: { id: string; deviceId: string; hash: string }[] = [];
  for (const [deviceId, compileInput] of inputs) {
    const { config, hash, json, warnings: w } = compileDeviceConfig(compileInput);
    if (w.length) warnings.set(deviceId, w);
    hashes.set(deviceId, hash);
    const changed = current.get(deviceId) !== hash;
    if (changed || stale.has(deviceId))
      jobs.push({
        id: randomUUID(),
        deviceId,
        hash,
        // Sealed: the config holds tunnel and peer PSKs (desired-config-seal.ts).
        // The canonical JSON its hash was taken of: stored and sent as it is (jobs/job-engine.ts).
        sealed: sealDesiredConfig(ctx.keyring, deviceId, json),
        tunnelIds: `{${config.tunnels.map((t) => t.id).join(",")}}`,
      });
    else if (input.force) unchangedForced.push({ id: randomUUID(), deviceId, hash });
  }
  // A device whose config did not change gets no job, unless forced; the recompiler queues none (they exist).
  const queued =
    input.queue === false ? [] : [...jobs.filter((j) => input.force || current.get(j.deviceId) !== j.hash), ...unchangedForced];
  let updatedAt: Date | undefined;
  if (input.rowChanges) {
    if (locked.length !== 1 || locked[0]!.id !== ids[0]) throw new Error("rowChanges needs exactly one locked device");
    const job = jobs[0];
    const desired = job
      ? {
          desired_config_enc: job.sealed,
          desired_tunnel_ids: sql<string[]>`${job.tunnelIds}::uuid[]`,
          desired_hash: job.hash,
          desired_stale: false,
          sync_attempts: 0,
          auto_sync_paused: false,
        }
      : {};
    const update = ctx.db
      .updateTable("devices")
      .set({ ...input.rowChanges, ...desired, updated_at: sql`now()` })
      .where("id", "=", ids[0]!)
      .returning("updated_at");
    // The change, its desired config and its job in one statement (one round trip of an approval fewer); the
    // job's device row is the one this statement updates, which the foreign key check sees at its end.
    const insert = insertJobsStatement(ctx, input, queued);
    const row = insert
      ? (await sql<{ updated_at: Date }>`with d as (${update}), j as (${insert}) select updated_at from d`.execute(ctx.db))
          .rows[0]
      : await update.executeTakeFirst();
    if (!row) throw new Error(`device ${ids[0]} vanished while locked`);
    updatedAt = row.updated_at;
  }
  // One statement per chunk, so a fan-out to thousands of devices stays a few round trips (the one device of
  // `rowChanges` is stored above).
  const toStore = input.rowChanges ? [] : jobs;
  const also = Object.entries(input.alsoSet ?? {}).map(([column, value]) => sql`, ${sql.ref(column)} = ${value}`);
  for (let i = 0; i < toStore.length; i += 500) {
    const chunk = toStore.slice(i, i + 500);
    await sql`update devices set desired_config_enc = v.sealed, desired_tunnel_ids = v.tunnels::uuid[],
        desired_hash = v.hash, desired_stale = false, sync_attempts = 0, auto_sync_paused = false, updated_at = now()${sql.join(also, sql``)}
      from (values ${sql.join(chunk.map((j) => sql`(${j.deviceId}::uuid, ${j.sealed}, ${j.tunnelIds}, ${j.hash})`))})
        as v(id, sealed, tunnels, hash)
      where devices.id = v.id`.execute(ctx.db);
  }
  if (input.alsoSet && !input.rowChanges) {
    const stored = new Set(toStore.map((j) => j.deviceId));
    const rest = ids.filter((id) => !stored.has(id));
    if (rest.length)
      await ctx.db
        .updateTable("devices")
        .set({ ...input.alsoSet, updated_at: sql`now()` })
        .where("id", "=", anyUuid(rest))
        .execute();
  }
  const recompiled = jobs.filter((j) => stale.has(j.deviceId));
  // A recompiled device's target-less jobs get its hash; the job just queued with `rowChanges` has one already.
  if (recompiled.length) await fillDeferredTargets(ctx.db, recompiled);
  if (!input.rowChanges) await insertJobs(ctx, input, queued);
  for (const r of queued) {
    jobIds.push(r.id);
    jobDevices.push(r.deviceId);
  }
  return { jobIds, jobDevices, warnings, hashes, ...(updatedAt ? { updatedAt } : {}) };
}

/**
 * Queued jobs, one statement whatever their number (arrays as parameters): `target` null queues a fan-out's job
 * whose device is recompiled after the answer (services/fanout). The jobs trigger wakes the devices' dispatchers
 * at commit (only for jobs with a target).
 */
export async function insertJobs(
  ctx: ServiceCtx,
  input: Pick<QueueJobsInput, "type" | "tasks">,
  jobs: readonly { id: string; deviceId: string; hash: string | null }[],
): Promise<void> {
  await insertJobsStatement(ctx, input, jobs)?.execute(ctx.db);
}

/** insertJobs' statement, to run alone or inside another (null when there is no job). */
function insertJobsStatement(
  ctx: ServiceCtx,
  input: Pick<QueueJobsInput, "type" | "tasks">,
  jobs: readonly { id: string; deviceId: string; hash: string | null }[],
) {
  if (jobs.length === 0) return null;
  const taskOf = input.tasks;
  // The same tasks for every job (the usual case) go as one parameter, not once per job.
  const tasks = typeof taskOf === "function" ? sql`u.tasks::jsonb` : sql`${toJson(taskOf)}::jsonb`;
  const perJob = typeof taskOf === "function" ? sql`, ${jobs.map((j) => toJson(taskOf(j.deviceId)))}::text[]` : sql``;
  return sql`insert into jobs (id, organization_id, device_id, type, state, tasks, target_hash, created_by, group_id)
    select u.id, ${ctx.org.id}::uuid, u.device_id, ${input.type}, 'queued', ${tasks}, u.hash, ${ctx.actor.label},
      ${ctx.jobGroup ?? null}::uuid
    from unnest(${jobs.map((j) => j.id)}::uuid[], ${jobs.map((j) => j.deviceId)}::uuid[],
      ${jobs.map((j) => j.hash)}::text[]${perJob}) as u(${sql.raw(typeof taskOf === "function" ? "id, device_id, hash, tasks" : "id, device_id, hash")})`;
}

/**
 * The target-less jobs of recompiled devices get their hash (queued ones; others cannot exist: such a job is never
 * sent nor settled), and their dispatchers are woken at commit as the jobs trigger would have.
 */
async function fillDeferredTargets(db: Db, devices: readonly { deviceId: string; hash: string }[]): Promise<void> {
  // Each device's jobs are found through the device_id index (lateral, kept apart from the outer query by
  // `offset 0` so it is not flattened into a join), whatever the planner thinks of
  // `target_hash is null`: right after a fan-out's INSERT the statistics say no job lacks a target, and a plain
  // join then scanned every job once per device of the batch (10,000 × 500 rows: 0.6 s per batch of 500).
  await sql`with x as (select j.id, u.hash
        from unnest(${devices.map((d) => d.deviceId)}::uuid[], ${devices.map((d) => d.hash)}::text[]) as u(device_id, hash)
        cross join lateral (select id from jobs where jobs.device_id = u.device_id and jobs.target_hash is null offset 0) j),
      filled as (update jobs set target_hash = x.hash from x where jobs.id = x.id returning jobs.device_id)
    select pg_notify('tern_jobs', d::text) from (select distinct device_id as d from filled) s`.execute(db);
}
