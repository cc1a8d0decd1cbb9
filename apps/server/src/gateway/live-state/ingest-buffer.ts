/**
 * Batched writes of live state. Status messages only touch memory here: the
 * latest state per device and per tunnel end (a newer report replaces an older
 * one still waiting) and the tunnel samples (appended). A flush writes them in
 * one transaction of a few statements whatever the number of rows, the rows
 * passed as one JSON parameter read by `jsonb_to_recordset` (no limit on rows
 * and one plan for every batch size). It runs when `batchRows` samples wait or
 * every `flushMs`, one at a time, and a backlog of at least `batchRows` is
 * written pass after pass (up to PASS_ROWS samples each) without waiting;
 * during such a backlog the latest values and device states (replaced in
 * memory by every newer report) are written once per `flushMs`, not with every
 * pass, so the passes are samples. On PostgreSQL the samples go in with COPY
 * (sample-copy.ts). The JSON and COPY text is built a slice of rows at a time
 * with a turn of the event loop between slices (in-slices.ts), so a flush
 * never holds the device sockets for long. A failed write keeps its rows for
 * the next flush.
 *
 * Back-pressure instead of drops: at `pauseAt` samples waiting the buffer says
 * it is `pressing`, and the gateway stops reading the sockets of the links
 * that report (ws pause: TCP then slows the devices down) until a write
 * brings it to `resumeAt` or below and `onRelieved` runs. `maxBuffered` stays
 * a hard bound of memory above that: what a paused socket had already read
 * still comes in, and only beyond `maxBuffered` is anything dropped (counted
 * in tern_ingest_dropped_total and logged). What a flush wrote is handed to
 * `onWritten` once it is committed (and only then: what is announced from
 * there is already readable).
 */
import type { BgpState, Health, InterfaceState } from "@tern/protocol";
import { type CompiledQuery, sql } from "kysely";
import type pg from "pg";
import type { Logger } from "pino";
import type { Db, DeviceVrrpState } from "../../db/schema.ts";
import type { ServerMetrics } from "../../metrics/server-metrics.ts";
import { ensurePartitions, NO_PARTITION } from "../../services/statistics/partitions.ts";
import { jsonArrayInSlices } from "./in-slices.ts";
import { copySamples } from "./sample-copy.ts";

export interface SampleRow {
  tunnelId: string;
  deviceId: string;
  side: "a" | "b";
  at: Date;
  up: boolean;
  loss: number;
  rtt: number;
  jitter: number;
  samples: number;
  /** Window span and the agent's cumulative probe counters; null from agents that do not send them. */
  windowMs: number | null;
  sent: number | null;
  received: number | null;
}

export interface StateRow {
  deviceId: string;
  orgId: string;
  reportedAt: Date;
  appliedHash: string | null;
  applying: boolean;
  interfaces: InterfaceState[];
  bgp: BgpState | null;
  vrrp: DeviceVrrpState[];
  health: Health | null;
}

export interface IngestOptions {
  batchRows: number;
  flushMs: number;
  maxBuffered: number;
  /** Samples waiting at which the buffer asks for back-pressure (default: half of maxBuffered). */
  pauseAt?: number;
  /** Samples waiting at or below which the back-pressure ends (default: a quarter of maxBuffered). */
  resumeAt?: number;
}

/** What one flush committed: the newest state of each device and the newest figures of each tunnel end. */
export interface WrittenBatch {
  states: readonly StateRow[];
  latest: readonly SampleRow[];
}

export interface FlushRecord {
  samples: number;
  states: number;
  ms: number;
}

/** devices.last_seen_at is refreshed at most this often per device (device_state.received_at is exact). */
const LAST_SEEN_RESOLUTION = "30 seconds";
/** Samples written by one flush pass at most (one statement; a backlog takes several passes back to back). */
const PASS_ROWS = 50_000;
/** Tries of a batch before it is dropped. */
const MAX_TRIES = 3;

export class IngestBuffer {
  private samples: SampleRow[] = [];
  private states = new Map<string, StateRow>();
  private latest = new Map<string, SampleRow>();
  private flushing: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private lastErrorLogAt = 0;
  private failures = 0;
  private lastStatesAt = Number.NEGATIVE_INFINITY;
  private pressed = false;
  private readonly pauseAt: number;
  private readonly resumeAt: number;
  /** Called once the buffer is back at `resumeAt` after it was pressing (the gateway resumes its reads). */
  onRelieved: () => void = () => {};
  /** The last flushes (for figures and tests). */
  readonly recent: FlushRecord[] = [];

  constructor(
    private readonly db: Db,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
    private readonly options: IngestOptions,
    /** Called after each committed write, outside it (a throw is logged, never taken for a failed write). */
    private readonly onWritten: (batch: WrittenBatch) => void = () => {},
    /** PostgreSQL: a pool of the writer's own, whose connection writes samples with COPY; else the Kysely path. */
    private readonly copyPool?: pg.Pool,
  ) {
    this.pauseAt = Math.min(options.pauseAt ?? Math.floor(options.maxBuffered / 2), options.maxBuffered);
    this.resumeAt = Math.min(options.resumeAt ?? Math.floor(options.maxBuffered / 4), this.pauseAt);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs);
  }

  get buffered(): number {
    return this.samples.length;
  }

  /** Over the high-water mark: links that report should stop being read until `onRelieved`. */
  get pressing(): boolean {
    return this.pressed;
  }

  /** Takes one status' worth of state and samples; never waits. */
  add(state: StateRow, samples: SampleRow[]): void {
    this.states.set(state.deviceId, state);
    for (const s of samples) this.latest.set(`${s.tunnelId}:${s.side}`, s);
    const room = this.options.maxBuffered - this.samples.length;
    if (room < samples.length) {
      this.metrics.ingestDropped.inc({ reason: "buffer-full" }, samples.length - Math.max(0, room));
      this.warn("ingest buffer full: samples dropped (the database does not keep up)");
    }
    for (let i = 0; i < Math.min(room, samples.length); i++) this.samples.push(samples[i]!);
    this.metrics.ingestBuffered.set(this.samples.length);
    if (!this.pressed && this.samples.length >= this.pauseAt) {
      this.pressed = true;
      this.metrics.ingestPauses.inc();
      queueMicrotask(() => void this.flush());
    }
    if (this.samples.length >= this.options.batchRows) queueMicrotask(() => void this.flush());
  }

  /** Writes what waits; concurrent calls share one write and ask for another pass. */
  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      let wrote: boolean;
      do {
        this.again = false;
        wrote = await this.writeOnce();
        // A backlog (a burst, or the database was slow) is written pass after pass, not one pass per
        // tick; after a failed write the next try waits for the next tick.
      } while (
        wrote &&
        (this.again || this.samples.length >= this.options.batchRows) &&
        this.samples.length + this.states.size > 0
      );
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** One pass; false when the write failed. */
  private async writeOnce(): Promise<boolean> {
    if (this.samples.length === 0 && this.states.size === 0) return true;
    const samples = this.samples.splice(0, PASS_ROWS);
    // In a backlog, a pass that follows a state write by less than flushMs writes samples only: the newest
    // state of each device and tunnel end waits in memory (replaced by newer reports) for a later pass.
    const backlog = this.samples.length >= this.options.batchRows;
    const withStates = !backlog || performance.now() - this.lastStatesAt >= this.options.flushMs;
    const states = withStates ? [...this.states.values()] : [];
    const latest = withStates ? [...this.latest.values()] : [];
    if (withStates) {
      this.states.clear();
      this.latest.clear();
    }
    const started = performance.now();
    try {
      if (this.copyPool) await this.writeCopy(this.copyPool, samples, latest, states);
      else {
        // The rows' JSON is built in slices before the transaction (in-slices.ts), so it does not hold the connection.
        const samplesJson = samples.length ? await jsonArrayInSlices(samples) : null;
        const live = await liveStateJson(latest, states);
        await this.db.transaction().execute(async (trx) => {
          if (samplesJson) await insertSamples(trx, samplesJson);
          if (live) await liveStateUpsert(live).execute(trx);
        });
      }
      if (withStates) this.lastStatesAt = performance.now();
      const ms = performance.now() - started;
      this.metrics.ingestBatchSeconds.observe(ms / 1000);
      this.metrics.ingestBatchRows.observe(samples.length);
      this.metrics.tunnelSamples.inc(samples.length);
      this.recent.push({ samples: samples.length, states: states.length, ms });
      if (this.recent.length > 100) this.recent.shift();
      this.failures = 0;
    } catch (caught) {
      this.metrics.ingestWriteFailures.inc();
      this.failures++;
      // The COPY path writes samples and states in two statements: what one of them wrote is not written again.
      const partial = caught instanceof PartialWrite ? caught : null;
      const err = partial ? partial.cause : caught;
      const failedSamples = partial?.samplesWritten ? [] : samples;
      if (failedSamples.length && (err as { code?: unknown })?.code === NO_PARTITION) await this.makePartitions(failedSamples);
      // The database being away is waited out (the buffer bounds what is kept); a batch that fails for
      // another reason again and again would block every later one, so after a few tries it is dropped.
      if (isTransient(err) || this.failures < MAX_TRIES) {
        this.warn("writing live state failed; keeping it for the next flush", err);
        if (partial?.liveWritten) this.requeue(failedSamples, [], []);
        else this.requeue(failedSamples, states, latest);
      } else {
        this.warn(`writing live state failed ${MAX_TRIES} times: batch dropped`, err);
        this.metrics.ingestDropped.inc({ reason: "write-failed" }, failedSamples.length);
        this.failures = 0;
      }
      return false;
    } finally {
      this.metrics.ingestBuffered.set(this.samples.length);
    }
    if (this.pressed && this.samples.length <= this.resumeAt) {
      this.pressed = false;
      try {
        this.onRelieved();
      } catch (err) {
        this.logger.error({ err }, "resuming the device links' reads failed");
      }
    }
    if (states.length || latest.length) {
      try {
        this.onWritten({ states, latest });
      } catch (err) {
        this.logger.error({ err }, "a listener of written live state failed");
      }
    }
    return true;
  }

  /**
   * Two statements sent back to back on the writer's connection, each its own transaction: the samples' COPY
   * and the one statement of latest values and states. Each round trip waits for a turn of the event loop,
   * which thousands of busy device sockets make long; two instead of six (begin, three statements, commit).
   */
  private async writeCopy(pool: pg.Pool, samples: SampleRow[], latest: SampleRow[], states: StateRow[]): Promise<void> {
    const json = await liveStateJson(latest, states);
    const live: CompiledQuery | null = json ? liveStateUpsert(json).compile(this.db) : null;
    const client = await pool.connect();
    const [copied, updated] = await Promise.allSettled([
      samples.length ? copySamples(client, samples) : Promise.resolve(),
      live ? client.query(live.sql, live.parameters as unknown[]) : Promise.resolve(),
    ]);
    const failed = copied.status === "rejected" ? copied.reason : updated.status === "rejected" ? updated.reason : null;
    // A connection that failed mid-COPY is not given back for reuse.
    client.release(failed ?? undefined);
    if (failed)
      throw new PartialWrite(
        failed,
        copied.status === "fulfilled" && samples.length > 0,
        updated.status === "fulfilled" && !!live,
      );
  }

  /**
   * Makes the samples' missing daily partitions (the partition duty makes them two days ahead; a server stopped
   * for longer writes before its first run), so the next pass writes what this one could not.
   */
  private async makePartitions(samples: SampleRow[]): Promise<void> {
    let since = Date.now();
    for (const s of samples) since = Math.min(since, s.at.getTime());
    try {
      await ensurePartitions(this.db, Date.now(), since, ["tunnel_samples"]);
    } catch (err) {
      this.warn("making the samples' partitions failed", err);
    }
  }

  /** Puts a failed batch back in front, newer reports winning, within the buffer's bound. */
  private requeue(samples: SampleRow[], states: StateRow[], latest: SampleRow[]): void {
    const merged = samples.concat(this.samples);
    const over = merged.length - this.options.maxBuffered;
    if (over > 0) this.metrics.ingestDropped.inc({ reason: "write-failed" }, over);
    this.samples = over > 0 ? merged.slice(over) : merged;
    for (const s of states) if (!this.states.has(s.deviceId)) this.states.set(s.deviceId, s);
    for (const s of latest) {
      const key = `${s.tunnelId}:${s.side}`;
      if (!this.latest.has(key)) this.latest.set(key, s);
    }
  }

  private warn(message: string, err?: unknown): void {
    const now = Date.now();
    if (now - this.lastErrorLogAt < 10_000) return;
    this.lastErrorLogAt = now;
    this.logger.warn({ err, buffered: this.samples.length }, message);
  }
}

/** A COPY-path pass of which one statement failed (`cause`) and the other may have been written. */
class PartialWrite extends Error {
  constructor(
    override readonly cause: unknown,
    readonly samplesWritten: boolean,
    readonly liveWritten: boolean,
  ) {
    super("live state partly written");
  }
}

/** Errors of an unreachable or restarting database, as opposed to errors of the batch itself. */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string") return true;
  return code.startsWith("08") || ["57P01", "57P02", "57P03", "53300", "40001", "40P01"].includes(code) || /^E[A-Z]+$/.test(code);
}

/**
 * Rows handed to PostgreSQL as one JSON parameter and read back with `jsonb_to_recordset` (the quoted column
 * names are the rows' own keys; Dates serialise as ISO text): one native `JSON.stringify` per statement
 * instead of a dozen array parameters that the pg client quotes element by element in JavaScript (the JSON
 * of a device's interfaces was stringified and then quoted again). One parameter, one plan, any row count.
 */
const SAMPLE_RECORDS = (json: string) => sql`jsonb_to_recordset(${json}::jsonb) as u(
  "tunnelId" uuid, "deviceId" uuid, side text, at timestamptz, up boolean, loss real, rtt real, jitter real,
  samples integer, "windowMs" integer, sent bigint, received bigint)`;
const SAMPLE_COLUMNS = sql`"tunnelId", "deviceId", side, at, up, loss, rtt, jitter, samples, "windowMs", sent, received`;

/** Samples as `jsonArrayInSlices` wrote them. */
async function insertSamples(db: Db, json: string): Promise<void> {
  await sql`insert into tunnel_samples (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples, window_ms, sent, received)
    select ${SAMPLE_COLUMNS} from ${SAMPLE_RECORDS(json)}`.execute(db);
}

/** The parameters of `liveStateUpsert`: the rows' JSON text (built in slices) and the devices' ids. */
export interface LiveStateJson {
  latest: string;
  states: string;
  ids: string[];
}

/** Null when there is nothing to write. */
export async function liveStateJson(latest: readonly SampleRow[], states: readonly StateRow[]): Promise<LiveStateJson | null> {
  if (latest.length === 0 && states.length === 0) return null;
  return { latest: await jsonArrayInSlices(latest), states: await jsonArrayInSlices(states), ids: states.map((r) => r.deviceId) };
}

/**
 * The latest values per tunnel end, the device states and the devices' last-seen times in one statement
 * (data-modifying CTEs: one round trip, one transaction).
 */
export function liveStateUpsert({ latest, states, ids }: LiveStateJson) {
  return sql`with latest as (
    insert into tunnel_latest (tunnel_id, device_id, side, at, up, loss, rtt, jitter, samples, window_ms, sent, received)
    select ${SAMPLE_COLUMNS} from ${SAMPLE_RECORDS(latest)}
    on conflict (tunnel_id, side) do update set device_id = excluded.device_id, at = excluded.at, up = excluded.up,
      loss = excluded.loss, rtt = excluded.rtt, jitter = excluded.jitter, samples = excluded.samples,
      window_ms = excluded.window_ms, sent = excluded.sent, received = excluded.received
    where tunnel_latest.at <= excluded.at
    returning 1
  ), states as (
    insert into device_state (device_id, organization_id, reported_at, received_at, applied_hash, applying,
      interfaces, bgp, vrrp, health)
    select u."deviceId", u."orgId", u."reportedAt", now(), u."appliedHash", u.applying,
      coalesce(u.interfaces, '[]'), u.bgp, coalesce(u.vrrp, '[]'), u.health
    from jsonb_to_recordset(${states}::jsonb) as u("deviceId" uuid, "orgId" uuid,
      "reportedAt" timestamptz, "appliedHash" text, applying boolean, interfaces jsonb, bgp jsonb, vrrp jsonb, health jsonb)
    where exists (select 1 from devices where devices.id = u."deviceId")
    on conflict (device_id) do update set reported_at = excluded.reported_at, received_at = excluded.received_at,
      applied_hash = excluded.applied_hash, applying = excluded.applying, interfaces = excluded.interfaces,
      bgp = excluded.bgp, vrrp = excluded.vrrp, health = excluded.health
    returning 1
  ), seen as (
    -- A device row someone else holds is skipped (refreshed at a later flush): ingestion never waits
    -- for, or deadlocks with, an admin change of the same devices.
    update devices set last_seen_at = now() where id in (
      select id from devices where id = any(${ids}::uuid[])
        and (last_seen_at is null or last_seen_at < now() - ${LAST_SEEN_RESOLUTION}::interval)
      order by id for no key update skip locked)
    returning 1
  )
  select (select count(*) from latest) as latest, (select count(*) from states) as states, (select count(*) from seen) as seen`;
}
