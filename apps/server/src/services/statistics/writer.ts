/**
 * The statistics writer: the status handler gives it each device status with
 * one call (`record`); it keeps, per device, the interfaces' last counters and
 * what has added up since the last raw row, and every TERN_STATS_RAW_INTERVAL_MS
 * of a device's statuses turns that into one raw row per interface (counter
 * deltas and the seconds they cover) and one health row (means and maxima).
 * BGP sessions' and VRRP groups' states that differ from the last seen on
 * this instance are written as changes when they differ from the last stored
 * one too (so a device moving to another instance repeats nothing).
 * Rows wait in memory and are written in batches (one multi-row `unnest`
 * insert per table) every second; nothing here runs on the websocket path.
 * A server restart loses at most the pending second and each interface's
 * first delta (the first report has no rate).
 */
import type { InterfaceState, Status } from "@tern/protocol";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import { sharedString } from "../../memory/shared-string.ts";
import { COUNTER_FIELDS, type CounterValues, counterDelta } from "./counters.ts";
import { ensurePartitions, NO_PARTITION } from "./partitions.ts";
import type { StatisticsSettings } from "./settings.ts";

/** A gap longer than this between two reports is not turned into a rate (the device was away). */
const MAX_GAP_MS = 5 * 60_000;
/** Devices silent this long are forgotten (their next report starts afresh). */
const FORGET_MS = 15 * 60_000;
const FLUSH_MS = 1000;
const FLUSH_ROWS = 5000;
/** Rows kept at most while the database is slow; beyond, the oldest are dropped (and logged). */
const MAX_PENDING = 200_000;
/** The partitioned tables this writer writes (a missing partition is made for them only). */
const WRITTEN_TABLES = ["stat_if_raw", "stat_health_raw", "stat_state_changes"];

/**
 * What the writer keeps of a device, as numbers in one array of unboxed doubles (`v`): its times and health
 * sums (HEAD numbers), then IF_SIZE numbers for each of its interfaces, in the order of `names`. As objects (an
 * interface's last counters, its sums, their map), a device with two interfaces took about 880 bytes of heap at
 * 10,000 devices; this is about 530. A counter the agent did not send is NaN (null in a row).
 */
interface DeviceTrack {
  orgId: string;
  /** Interface devIds, the order of their numbers in `v`. */
  names: string[];
  v: number[];
  /** BGP / VRRP states last seen (made at the first: most devices run neither). */
  states: Map<string, string> | null;
}

/** Where the device's numbers are in `v`: last report, interval start, then the health sums. */
const SEEN_AT = 0;
const INTERVAL_START = 1;
const H_N = 2;
const H_CPU = 3;
const H_CPU_MAX = 4;
const H_MEMORY = 5;
const H_DISK = 6;
const H_UPTIME = 7;
const H_TEMP = 8;
const H_TEMP_N = 9;
const HEAD = 10;
/** An interface's numbers, from HEAD + IF_SIZE × its index: its last report's time, the seconds its sums cover, its last counters and their sums since the last row (COUNTER_FIELDS order). */
const LAST_AT = 0;
const SECONDS = 1;
const LAST = 2;
const ACC = LAST + COUNTER_FIELDS.length;
const IF_SIZE = ACC + COUNTER_FIELDS.length;

/** An interface's report as its last one (a counter it did not send as NaN), from `base` in `v`. */
function keepLast(v: number[], base: number, report: InterfaceState, now: number): void {
  for (let f = 0; f < COUNTER_FIELDS.length; f++) v[base + LAST + f] = report[COUNTER_FIELDS[f]!] ?? Number.NaN;
  v[base + LAST_AT] = now;
}

/** Sums of a new interval: bytes start at 0, the other counters are absent (NaN) until a delta comes. */
function resetSums(v: number[], base: number): void {
  v[base + SECONDS] = 0;
  for (let f = 0; f < COUNTER_FIELDS.length; f++) v[base + ACC + f] = f < 2 ? 0 : Number.NaN;
}

function resetHealth(v: number[]): void {
  v.fill(0, H_N, HEAD);
}

export interface IfRawRow {
  at: Date;
  orgId: string;
  deviceId: string;
  interface: string;
  seconds: number;
  counters: CounterValues;
}
export interface HealthRawRow {
  at: Date;
  orgId: string;
  deviceId: string;
  samples: number;
  cpu: number;
  cpuMax: number;
  memory: number;
  disk: number;
  uptime: number;
  temperature: number | null;
}
export interface StateObservation {
  at: Date;
  orgId: string;
  deviceId: string;
  kind: "bgp" | "vrrp";
  key: string;
  state: string;
}

export interface DeviceRef {
  deviceId: string;
  orgId: string;
}

export class StatisticsWriter {
  private readonly devices = new Map<string, DeviceTrack>();
  private ifRows: IfRawRow[] = [];
  private healthRows: HealthRawRow[] = [];
  private observations: StateObservation[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** Rows written and dropped since start (tests, logs). */
  readonly counts = { interfaceRows: 0, healthRows: 0, stateChanges: 0, dropped: 0 };

  constructor(
    private readonly db: Db,
    private readonly settings: Pick<StatisticsSettings, "rawIntervalMs">,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_MS);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** One status of a device, received at `at` (the server's clock keeps every series ordered). */
  record(ref: DeviceRef, status: Pick<Status, "interfaces" | "health" | "bgp" | "vrrp">, at: Date = new Date()): void {
    const now = at.getTime();
    let d = this.devices.get(ref.deviceId);
    if (!d) {
      // A double literal: the array holds unboxed doubles from the start.
      d = { orgId: ref.orgId, names: [], v: [now, now, 0, 0, 0, 0, 0, 0, 0, 0], states: null };
      this.devices.set(ref.deviceId, d);
    }
    let v = d.v;
    v[SEEN_AT] = now;
    for (const i of status.interfaces) {
      const k = d.names.indexOf(i.devId);
      if (k < 0) {
        // The first report of an interface has no delta: its counters are kept as the last ones.
        const base = v.length;
        // New arrays of the exact size (push would reserve room unused).
        v = d.v = v.concat(new Array<number>(IF_SIZE).fill(Number.NaN));
        d.names = d.names.concat(sharedString(i.devId));
        keepLast(v, base, i, now);
        resetSums(v, base);
        continue;
      }
      const base = HEAD + k * IF_SIZE;
      const gap = now - v[base + LAST_AT]!;
      if (gap > 0 && gap <= MAX_GAP_MS) {
        for (let f = 0; f < COUNTER_FIELDS.length; f++) {
          const prev = v[base + LAST + f]!;
          const cur = i[COUNTER_FIELDS[f]!];
          if (Number.isNaN(prev) || cur === undefined || cur === null) continue;
          const sum = v[base + ACC + f]!;
          v[base + ACC + f] = (Number.isNaN(sum) ? 0 : sum) + counterDelta(prev, cur);
        }
        v[base + SECONDS] = v[base + SECONDS]! + gap / 1000;
      }
      if (gap > 0) keepLast(v, base, i, now);
    }
    const h = status.health;
    if (h) {
      v[H_N] = v[H_N]! + 1;
      v[H_CPU] = v[H_CPU]! + h.cpuPercent;
      v[H_CPU_MAX] = Math.max(v[H_CPU_MAX]!, h.cpuPercent);
      v[H_MEMORY] = v[H_MEMORY]! + h.memoryPercent;
      v[H_DISK] = v[H_DISK]! + h.diskPercent;
      v[H_UPTIME] = h.uptimeSeconds;
      if (h.temperatureC !== null) {
        v[H_TEMP] = v[H_TEMP]! + h.temperatureC;
        v[H_TEMP_N] = v[H_TEMP_N]! + 1;
      }
    }
    this.observeStates(ref, d, status, at);
    if (now - v[INTERVAL_START]! >= this.settings.rawIntervalMs) this.emit(ref, d, at);
    if (this.pending() >= FLUSH_ROWS) void this.flush();
  }

  private observeStates(ref: DeviceRef, d: DeviceTrack, status: Pick<Status, "bgp" | "vrrp">, at: Date): void {
    const seen: [StateObservation["kind"], string, string][] = [
      ...(status.bgp?.neighbors ?? []).map((n) => ["bgp", n.ip, n.state] as [StateObservation["kind"], string, string]),
      ...status.vrrp.map((v) => ["vrrp", v.groupId, v.state] as [StateObservation["kind"], string, string]),
    ];
    for (const [kind, key, state] of seen) {
      const id = `${kind}|${key}`;
      d.states ??= new Map();
      if (d.states.get(id) === state) continue;
      d.states.set(id, state);
      this.observations.push({ at, orgId: ref.orgId, deviceId: ref.deviceId, kind, key, state });
    }
  }

  private emit(ref: DeviceRef, d: DeviceTrack, at: Date): void {
    const v = d.v;
    for (let k = 0; k < d.names.length; k++) {
      const b = HEAD + k * IF_SIZE;
      const seconds = v[b + SECONDS]!;
      if (seconds <= 0) continue;
      const counters = {} as CounterValues;
      for (let f = 0; f < COUNTER_FIELDS.length; f++) {
        const sum = v[b + ACC + f]!;
        counters[COUNTER_FIELDS[f]!] = Number.isNaN(sum) ? null : sum;
      }
      this.ifRows.push({ at, orgId: ref.orgId, deviceId: ref.deviceId, interface: d.names[k]!, seconds, counters });
      resetSums(v, b);
    }
    const n = v[H_N]!;
    if (n > 0)
      this.healthRows.push({
        at,
        orgId: ref.orgId,
        deviceId: ref.deviceId,
        samples: n,
        cpu: v[H_CPU]! / n,
        cpuMax: v[H_CPU_MAX]!,
        memory: v[H_MEMORY]! / n,
        disk: v[H_DISK]! / n,
        uptime: v[H_UPTIME]!,
        temperature: v[H_TEMP_N]! > 0 ? v[H_TEMP]! / v[H_TEMP_N]! : null,
      });
    resetHealth(v);
    v[INTERVAL_START] = at.getTime();
  }

  private pending(): number {
    return this.ifRows.length + this.healthRows.length + this.observations.length;
  }

  /** Writes what waits (also called by tests); one flush at a time. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending() === 0) return this.forgetSilent();
    this.flushing = this.write().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private forgetSilent(): void {
    const cutoff = Date.now() - FORGET_MS;
    for (const [id, d] of this.devices) if (d.v[SEEN_AT]! < cutoff) this.devices.delete(id);
  }

  private async write(): Promise<void> {
    const ifRows = this.ifRows;
    const healthRows = this.healthRows;
    const observations = this.observations;
    this.ifRows = [];
    this.healthRows = [];
    this.observations = [];
    try {
      this.counts.stateChanges += await this.insertAll(ifRows, healthRows, observations);
      this.counts.interfaceRows += ifRows.length;
      this.counts.healthRows += healthRows.length;
    } catch (err) {
      const n = ifRows.length + healthRows.length + observations.length;
      // Kept for the next flush, within bounds: a database that is briefly away costs nothing.
      if (n + this.pending() <= MAX_PENDING) {
        this.ifRows = ifRows.concat(this.ifRows);
        this.healthRows = healthRows.concat(this.healthRows);
        this.observations = observations.concat(this.observations);
      } else {
        this.counts.dropped += n;
      }
      this.logger.warn({ err, rows: n }, "statistics rows not written yet");
    }
  }

  /** One transaction; when a row found no partition (the partition duty has not run yet), makes them and retries once. */
  private async insertAll(ifRows: IfRawRow[], healthRows: HealthRawRow[], observations: StateObservation[]): Promise<number> {
    const run = () =>
      this.db.transaction().execute(async (trx) => {
        await insertInterfaceRows(trx, ifRows);
        await insertHealthRows(trx, healthRows);
        return insertStateChanges(trx, observations);
      });
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: string }).code !== NO_PARTITION) throw err;
      const times = [...ifRows, ...healthRows, ...observations].map((r) => r.at.getTime());
      await ensurePartitions(this.db, Date.now(), Math.min(...times), WRITTEN_TABLES);
      return await run();
    }
  }
}

const num = (v: number | null) => v;

export async function insertInterfaceRows(db: Db, rows: IfRawRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: IfRawRow) => T) => rows.map(f);
  await sql`insert into stat_if_raw (at, organization_id, device_id, interface, seconds,
      rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_drops, tx_drops)
    select * from unnest(${col((r) => r.at.toISOString())}::timestamptz[], ${col((r) => r.orgId)}::uuid[],
      ${col((r) => r.deviceId)}::uuid[], ${col((r) => r.interface)}::text[], ${col((r) => r.seconds)}::real[],
      ${col((r) => r.counters.rxBytes)}::bigint[], ${col((r) => r.counters.txBytes)}::bigint[],
      ${col((r) => num(r.counters.rxPackets))}::bigint[], ${col((r) => num(r.counters.txPackets))}::bigint[],
      ${col((r) => num(r.counters.rxErrors))}::bigint[], ${col((r) => num(r.counters.txErrors))}::bigint[],
      ${col((r) => num(r.counters.rxDrops))}::bigint[], ${col((r) => num(r.counters.txDrops))}::bigint[])`.execute(db);
}

export async function insertHealthRows(db: Db, rows: HealthRawRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: HealthRawRow) => T) => rows.map(f);
  await sql`insert into stat_health_raw (at, organization_id, device_id, samples, cpu, cpu_max, memory, disk, uptime, temperature)
    select * from unnest(${col((r) => r.at.toISOString())}::timestamptz[], ${col((r) => r.orgId)}::uuid[],
      ${col((r) => r.deviceId)}::uuid[], ${col((r) => r.samples)}::int[], ${col((r) => r.cpu)}::real[],
      ${col((r) => r.cpuMax)}::real[], ${col((r) => r.memory)}::real[], ${col((r) => r.disk)}::real[],
      ${col((r) => r.uptime)}::float8[], ${col((r) => r.temperature)}::real[])`.execute(db);
}

/**
 * Stores the observations that differ from the last stored state of their
 * session or group, with that state as `from`. A key observed twice in one
 * batch is written in order, one statement per occurrence.
 */
export async function insertStateChanges(db: Db, observations: StateObservation[]): Promise<number> {
  let written = 0;
  let rest = observations;
  while (rest.length > 0) {
    const round: StateObservation[] = [];
    const later: StateObservation[] = [];
    const keys = new Set<string>();
    for (const o of rest) {
      const k = `${o.deviceId}|${o.kind}|${o.key}`;
      if (keys.has(k)) later.push(o);
      else {
        keys.add(k);
        round.push(o);
      }
    }
    const col = <T>(f: (r: StateObservation) => T) => round.map(f);
    const result = await sql`insert into stat_state_changes (at, organization_id, device_id, kind, key, from_state, to_state)
      select n.at, n.org, n.dev, n.kind, n.key, prev.to_state, n.state
      from unnest(${col((r) => r.at.toISOString())}::timestamptz[], ${col((r) => r.orgId)}::uuid[],
        ${col((r) => r.deviceId)}::uuid[], ${col((r) => r.kind)}::text[], ${col((r) => r.key)}::text[],
        ${col((r) => r.state)}::text[]) as n(at, org, dev, kind, key, state)
      left join lateral (
        select s.to_state from stat_state_changes s
        where s.device_id = n.dev and s.kind = n.kind and s.key = n.key order by s.at desc limit 1
      ) prev on true
      where prev.to_state is distinct from n.state`.execute(db);
    written += Number(result.numAffectedRows ?? 0);
    rest = later;
  }
  return written;
}
