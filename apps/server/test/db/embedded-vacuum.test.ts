/**
 * The embedded database's autovacuum (db/embedded-vacuum.ts): autovacuum's rules picked from the tables'
 * counters, and on a real PGlite, a table churned again and again keeps its size once maintained (unmaintained,
 * it grows by a table's worth each round). The database part runs on PGlite only, the engine it is started for:
 * PostgreSQL's own autovacuum would race it there.
 */
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.ts";
import { dueWork, EmbeddedVacuum, type TableCounters, type VacuumSettings } from "../../src/db/embedded-vacuum.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const DEFAULTS: VacuumSettings = {
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  freezeMaxAge: 200_000_000,
  multixactFreezeMaxAge: 400_000_000,
};

const table = (name: string, counters: Partial<TableCounters> = {}): TableCounters => ({
  table: name,
  deadRows: 0,
  modifiedSinceAnalyze: 0,
  insertedSinceVacuum: 0,
  rows: 10_000,
  xidAge: 1_000,
  multixactAge: 0,
  ...counters,
});

describe("dueWork", () => {
  it("picks what autovacuum's thresholds pick, the most overdue first and wraparound before all", () => {
    const work = dueWork(
      [
        // 10,000 rows: vacuum over 2,050 dead, analyze over 1,050 changed, insert vacuum over 3,000 inserted.
        table("quiet", { deadRows: 2_050, modifiedSinceAnalyze: 1_050, insertedSinceVacuum: 3_000 }),
        table("dead", { deadRows: 4_100, modifiedSinceAnalyze: 4_100 }),
        table("changed", { modifiedSinceAnalyze: 1_051 }),
        table("inserted", { insertedSinceVacuum: 3_001, modifiedSinceAnalyze: 3_001 }),
        table("old", { xidAge: 200_000_001 }),
        table("old multixacts", { multixactAge: 400_000_001 }),
        table("empty", { rows: 0, deadRows: 51 }),
      ],
      DEFAULTS,
    );
    expect(work.map((w) => [w.table, w.vacuum, w.analyze, w.reason])).toEqual([
      ["old", true, false, "wraparound"],
      ["old multixacts", true, false, "wraparound"],
      ["dead", true, true, "dead rows"],
      ["inserted", true, true, "inserts"],
      ["empty", true, false, "dead rows"],
      ["changed", false, true, "changes"],
    ]);
  });

  it("follows the database's settings", () => {
    const busy = table("busy", { deadRows: 600, insertedSinceVacuum: 2_500 });
    expect(dueWork([busy], DEFAULTS)).toEqual([]);
    expect(dueWork([busy], { ...DEFAULTS, vacuumScaleFactor: 0.05 }).map((w) => w.reason)).toEqual(["dead rows"]);
    expect(dueWork([busy], { ...DEFAULTS, insertScaleFactor: 0.1 }).map((w) => w.reason)).toEqual(["inserts"]);
    expect(dueWork([busy], { ...DEFAULTS, insertThreshold: Infinity, insertScaleFactor: 0 })).toEqual([]);
  });
});

describe.runIf(testDatabaseKind() === "pglite")("the embedded database's maintenance", () => {
  let database: DatabaseHandle;
  const logger = pino({ level: "silent" });
  beforeAll(async () => {
    database = await openDatabase({ kind: "pglite" });
    await sql`create table churn (id int primary key, pad text)`.execute(database.db);
    await sql`create table other (id int primary key)`.execute(database.db);
  });
  afterAll(() => database.close());

  const refill = async (name: string) => {
    await sql`delete from ${sql.table(name)}`.execute(database.db);
    await sql`insert into ${sql.table(name)} select g, repeat('x', 200) from generate_series(1, 5000) g`.execute(database.db);
  };
  /** The session's counters reach the shared statistics at most once a second unless a flush is asked for. */
  const flushed = () => sql`select pg_stat_force_next_flush()`.execute(database.db);
  const pages = async () =>
    (await sql<{ pages: number }>`select pg_relation_size('churn') / 8192 as pages`.execute(database.db)).rows[0]!.pages;
  const counters = async (name: string) => {
    await flushed();
    return (
      await sql<{ dead: number; vacuums: number; analyzes: number }>`
        select n_dead_tup::int as dead, vacuum_count::int as vacuums, analyze_count::int as analyzes
        from pg_stat_user_tables where relname = ${name}`.execute(database.db)
    ).rows[0]!;
  };

  it("vacuums and analyzes a churned table, and keeps its size where an unmaintained one grows each round", async () => {
    const vacuum = new EmbeddedVacuum(database.db, logger);
    await sql`insert into churn select g, repeat('x', 200) from generate_series(1, 5000) g`.execute(database.db);
    await vacuum.runOnce();
    const first = await pages();

    // Unmaintained: every round's deleted rows keep their pages.
    for (let round = 0; round < 3; round++) await refill("churn");
    expect(await pages()).toBeGreaterThan(first * 3);
    const before = await counters("churn");
    expect(before.dead).toBe(15_000);

    const runs = await vacuum.runOnce();
    expect(runs.filter((r) => r.table === "churn").map((r) => [r.command, r.reason])).toEqual([
      ["vacuum", "dead rows"],
      ["analyze", "dead rows"],
    ]);
    const after = await counters("churn");
    expect(after.dead).toBe(0);
    expect(after.vacuums).toBe(before.vacuums + 1);
    expect(after.analyzes).toBe(before.analyzes + 1);
    // The planner knows the rows now.
    const { rows } = await sql<{ n: number }>`select reltuples::int as n from pg_class where relname = 'churn'`.execute(
      database.db,
    );
    expect(rows[0]!.n).toBe(5000);
    // Nothing is due right after.
    expect((await vacuum.runOnce()).filter((r) => r.table === "churn")).toEqual([]);

    // Maintained after each round: the freed pages take the next round's rows, so the table stops growing.
    const maintained = await pages();
    for (let round = 0; round < 3; round++) {
      await refill("churn");
      await vacuum.runOnce();
    }
    expect(await pages()).toBeLessThanOrEqual(maintained + first);
  });

  it("starts no statement after its budget but the first, and the next check goes on where it stopped", async () => {
    const vacuum = new EmbeddedVacuum(database.db, logger, { budgetMs: 0 });
    await vacuum.runOnce();
    await refill("churn");
    await sql`insert into other select g from generate_series(1, 5000) g`.execute(database.db);
    const first = await vacuum.runOnce();
    expect(first).toHaveLength(1);
    const rest: string[] = [];
    for (let check = 0; check < 10; check++) {
      const runs = await vacuum.runOnce();
      if (runs.length === 0) break;
      expect(runs).toHaveLength(1);
      rest.push(`${runs[0]!.command} ${runs[0]!.table}`);
    }
    const all = [`${first[0]!.command} ${first[0]!.table}`, ...rest];
    expect(all.filter((r) => r.endsWith(" churn")).sort()).toEqual(["analyze churn", "vacuum churn"]);
    expect(all.filter((r) => r.endsWith(" other")).sort()).toEqual(["analyze other", "vacuum other"]);
  });

  it("goes on with the other tables when one fails, and logs which", async () => {
    // ANALYZE evaluates an expression index's function over its sample: this one throws once told to.
    await sql`create function boom(x int) returns int language plpgsql immutable as $$
      begin if current_setting('tern_test.boom', true) = 'on' then raise exception 'boom'; end if; return x; end $$`.execute(
      database.db,
    );
    await sql`create table fragile (id int primary key)`.execute(database.db);
    await sql`create index fragile_boom on fragile (boom(id))`.execute(database.db);
    const warnings: unknown[] = [];
    const vacuum = new EmbeddedVacuum(
      database.db,
      Object.assign(pino({ level: "silent" }), { warn: (o: unknown) => warnings.push(o) }) as never,
    );
    await vacuum.runOnce();
    // Far more changed rows than the churned table's, so the failing table comes first.
    await sql`insert into fragile select g from generate_series(1, 20000) g`.execute(database.db);
    await refill("churn");
    await sql`set tern_test.boom = 'on'`.execute(database.db);
    try {
      const runs = (await vacuum.runOnce()).map((r) => `${r.command} ${r.table}`);
      expect(runs).toContain("analyze churn");
      expect(runs).toContain("vacuum fragile");
      expect(runs).not.toContain("analyze fragile");
      expect(warnings).toEqual([expect.objectContaining({ table: "fragile", command: "analyze" })]);
    } finally {
      await sql`reset tern_test.boom`.execute(database.db);
    }
    expect((await vacuum.runOnce()).map((r) => `${r.command} ${r.table}`)).toContain("analyze fragile");
  });

  it("summarizes the filled ranges of BRIN indexes set to autosummarize, as autovacuum does, and only those", async () => {
    const vacuum = new EmbeddedVacuum(database.db, logger);
    for (const [name, autosummarize] of [
      ["series_on", true],
      ["series_off", false],
    ] as const) {
      await sql`create table ${sql.table(name)} (at timestamptz not null)`.execute(database.db);
      await sql`create index ${sql.id(`${name}_brin`)} on ${sql.table(name)} using brin (at)
        with (autosummarize = ${sql.raw(autosummarize ? "on" : "off")})`.execute(database.db);
      await sql`insert into ${sql.table(name)} select now() + g * interval '1 s' from generate_series(1, 100000) g`.execute(
        database.db,
      );
    }
    await vacuum.runOnce();
    const unsummarized = async (index: string) =>
      (await sql<{ n: number }>`select brin_summarize_new_values(${index}::regclass) as n`.execute(database.db)).rows[0]!.n;
    expect(await unsummarized("series_on_brin")).toBe(0);
    expect(await unsummarized("series_off_brin")).toBeGreaterThan(0);
  });

  it("ends its checks on close, waiting for a statement that runs", async () => {
    const vacuum = new EmbeddedVacuum(database.db, logger, { intervalMs: 20 });
    await refill("churn");
    vacuum.start();
    await expect.poll(async () => (await counters("churn")).dead, { timeout: 5000 }).toBe(0);
    await vacuum.close();
    await refill("churn");
    await new Promise((r) => setTimeout(r, 100));
    expect((await counters("churn")).dead).toBe(5000);
  });
});
