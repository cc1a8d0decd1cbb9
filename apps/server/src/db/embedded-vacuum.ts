/**
 * Autovacuum for the embedded database. PGlite runs PostgreSQL in single-user
 * mode, which has no autovacuum launcher: nothing ever vacuums or analyzes it.
 * Without this, the rows every update and delete leave dead stay in the tables
 * and their indexes (a table deleted and refilled five times held nearly
 * five times its rows' pages), the planner never gets statistics of what the tables hold,
 * and transaction ids age towards wraparound, where PostgreSQL stops taking
 * writes to protect its data.
 *
 * So the server does what autovacuum would, by its rules and with its
 * settings (PostgreSQL's defaults: a table is vacuumed once 20 % of its rows
 * plus 50 are dead, or 20 % plus 1,000 were inserted since the last vacuum;
 * analyzed once 10 % plus 50 changed; vacuumed whatever its dead rows once its
 * oldest transaction id is 200 million old). Each check (every minute, as
 * autovacuum's naptime) reads the tables' counters in one statement and runs
 * what is due, the most overdue table first, each VACUUM and ANALYZE its own
 * statement. PGlite has one connection: requests wait while a statement runs
 * (a vacuum of 10,000 devices' rows, each updated once since, took about
 * 0.5 s),
 * so a check starts no statement after CHECK_BUDGET_MS but its first, and
 * leaves the rest to the next one. Each check first summarizes the filled page
 * ranges of BRIN indexes set to `autosummarize` (the samples' `at`), as
 * autovacuum does on a server of its own: a range without a summary matches
 * every query (migration 20261207-201).
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "./schema.ts";

/** How often the tables' counters are read (autovacuum_naptime's default). */
export const CHECK_INTERVAL_MS = 60_000;
/** A check starts no new statement after this long. */
export const CHECK_BUDGET_MS = 1_000;
/** A run this long is logged at info (autovacuum's log_autovacuum_min_duration is 10 min on a server of its own). */
const SLOW_MS = 1_000;

/** A table's counters as pg_stat_all_tables and pg_class hold them. */
export interface TableCounters {
  /** The table's name as a quoted, schema-qualified identifier (`regclass` text). */
  table: string;
  deadRows: number;
  modifiedSinceAnalyze: number;
  insertedSinceVacuum: number;
  /** The planner's row estimate (0 when never counted). */
  rows: number;
  xidAge: number;
  multixactAge: number;
}

/** The autovacuum settings the database runs with. */
export interface VacuumSettings {
  vacuumThreshold: number;
  vacuumScaleFactor: number;
  insertThreshold: number;
  insertScaleFactor: number;
  analyzeThreshold: number;
  analyzeScaleFactor: number;
  freezeMaxAge: number;
  multixactFreezeMaxAge: number;
}

export interface VacuumWork {
  table: string;
  vacuum: boolean;
  analyze: boolean;
  /** Why: "wraparound", "dead rows", "inserts" or "changes". */
  reason: string;
  /** How far over its threshold the table is (how due it is; wraparound work sorts first whatever its ratio). */
  urgency: number;
}

/** What autovacuum would run on these tables, the most due first. */
export function dueWork(tables: readonly TableCounters[], s: VacuumSettings): VacuumWork[] {
  const work: VacuumWork[] = [];
  for (const t of tables) {
    const wraparound = t.xidAge > s.freezeMaxAge || t.multixactAge > s.multixactFreezeMaxAge;
    const dead = t.deadRows / (s.vacuumThreshold + s.vacuumScaleFactor * t.rows);
    const inserts = t.insertedSinceVacuum / (s.insertThreshold + s.insertScaleFactor * t.rows);
    const changes = t.modifiedSinceAnalyze / (s.analyzeThreshold + s.analyzeScaleFactor * t.rows);
    const vacuum = wraparound || dead > 1 || inserts > 1;
    const analyze = changes > 1;
    if (!vacuum && !analyze) continue;
    const reason = wraparound ? "wraparound" : dead > 1 ? "dead rows" : inserts > 1 ? "inserts" : "changes";
    work.push({ table: t.table, vacuum, analyze, reason, urgency: wraparound ? Infinity : Math.max(dead, inserts, changes) });
  }
  return work.sort((a, b) => b.urgency - a.urgency);
}

/** One statement's run, as logged and as runOnce() returns it. */
export interface VacuumRun {
  table: string;
  command: "vacuum" | "analyze";
  reason: string;
  ms: number;
}

export class EmbeddedVacuum {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<VacuumRun[]> | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: { intervalMs?: number; budgetMs?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs ?? CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the checks; waits for a statement that is running (the database closes after this). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One check: reads the counters, runs what is due within the budget (also called by tests). */
  runOnce(): Promise<VacuumRun[]> {
    this.running ??= this.check().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async check(): Promise<VacuumRun[]> {
    const runs: VacuumRun[] = [];
    try {
      const summarized = await summarizeNewRanges(this.db);
      if (summarized > 0) this.logger.debug({ summarized }, "embedded database maintained: BRIN ranges summarized");
    } catch (err) {
      if (!this.closed) this.logger.warn({ err }, "embedded database maintenance: BRIN ranges not summarized");
    }
    let due: VacuumWork[];
    try {
      due = await dueNow(this.db);
    } catch (err) {
      if (!this.closed) this.logger.warn({ err }, "embedded database maintenance: counters not read; the next check reads again");
      return runs;
    }
    const started = performance.now();
    let statements = 0;
    for (const work of due) {
      for (const command of ["vacuum", "analyze"] as const) {
        if (!work[command]) continue;
        // At least one statement a check, so a slow read of the counters cannot stop all progress.
        const spent = performance.now() - started;
        if (this.closed || (statements > 0 && spent > (this.options.budgetMs ?? CHECK_BUDGET_MS))) return runs;
        statements += 1;
        const t0 = performance.now();
        try {
          await sql`${sql.raw(command)} ${sql.raw(work.table)}`.execute(this.db);
        } catch (err) {
          // A table dropped since the counters were read (a statistics partition past its retention), or one that
          // cannot be analyzed: the others still get their turn, and the next check tries it again.
          if (this.closed) return runs;
          this.logger.warn({ err, table: work.table, command }, "embedded database maintenance failed for a table");
          continue;
        }
        const run = { table: work.table, command, reason: work.reason, ms: Math.round(performance.now() - t0) };
        runs.push(run);
        this.logger[run.ms >= SLOW_MS ? "info" : "debug"](run, "embedded database maintained");
      }
    }
    return runs;
  }
}

/** Summarizes the page ranges not yet summarized of every BRIN index set to `autosummarize`; how many. */
export async function summarizeNewRanges(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`select coalesce(sum(brin_summarize_new_values(c.oid)), 0)::int as n
    from pg_class c join pg_am a on a.oid = c.relam
    where c.relkind = 'i' and a.amname = 'brin' and c.reloptions @> array['autosummarize=on']`.execute(db);
  return rows[0]?.n ?? 0;
}

/** What is due now, by the database's counters and its autovacuum settings. */
async function dueNow(db: Db): Promise<VacuumWork[]> {
  // A session hands its counters to the shared statistics at most once a second unless told to: what the last
  // statements changed is counted before they are read.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<TableCounters & { settings: VacuumSettings }>`
    select c.oid::regclass::text as "table",
      s.n_dead_tup::float8 as "deadRows",
      s.n_mod_since_analyze::float8 as "modifiedSinceAnalyze",
      s.n_ins_since_vacuum::float8 as "insertedSinceVacuum",
      greatest(c.reltuples, 0)::float8 as "rows",
      age(c.relfrozenxid)::float8 as "xidAge",
      mxid_age(c.relminmxid)::float8 as "multixactAge",
      json_build_object(
        'vacuumThreshold', current_setting('autovacuum_vacuum_threshold')::float8,
        'vacuumScaleFactor', current_setting('autovacuum_vacuum_scale_factor')::float8,
        'insertThreshold', current_setting('autovacuum_vacuum_insert_threshold')::float8,
        'insertScaleFactor', current_setting('autovacuum_vacuum_insert_scale_factor')::float8,
        'analyzeThreshold', current_setting('autovacuum_analyze_threshold')::float8,
        'analyzeScaleFactor', current_setting('autovacuum_analyze_scale_factor')::float8,
        'freezeMaxAge', current_setting('autovacuum_freeze_max_age')::float8,
        'multixactFreezeMaxAge', current_setting('autovacuum_multixact_freeze_max_age')::float8
      ) as settings
    from pg_class c
    join pg_stat_all_tables s on s.relid = c.oid
    where c.relkind in ('r', 'm') and c.relpersistence = 'p'
      and c.relnamespace not in ('pg_toast'::regnamespace, 'information_schema'::regnamespace)`.execute(db);
  const settings = rows[0]?.settings;
  if (!settings) return [];
  // An insert threshold of -1 turns inserts off as a reason (the setting's meaning in PostgreSQL).
  if (settings.insertThreshold < 0) settings.insertThreshold = Infinity;
  return dueWork(rows, settings);
}
