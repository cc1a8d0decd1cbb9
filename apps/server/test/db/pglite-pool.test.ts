/**
 * The embedded database's one-connection pool (db/pglite-pool.ts): statements of different callers are sent
 * without waiting for each other's answers (the database runs them in order), while a transaction is open only
 * its own statements are sent and the others wait for its COMMIT or ROLLBACK, and on a real database
 * concurrent transactions and statements keep their isolation.
 */
import type { Results } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.ts";
import { createPGlitePool } from "../../src/db/pglite-pool.ts";
import type { PGliteQuery } from "../../src/db/pglite-prepared.ts";
import { testDatabaseKind } from "../support/test-database.ts";

/** A runner that records what was sent and answers only when told. */
function heldRunner() {
  const sent: string[] = [];
  const answers: (() => void)[] = [];
  const run: PGliteQuery = <R>(text: string) => {
    sent.push(text);
    return new Promise<Results<R>>((resolve) => answers.push(() => resolve({ rows: [], fields: [] } as Results<R>)));
  };
  const answerAll = () => {
    for (const answer of answers.splice(0)) answer();
  };
  return { sent, run, answerAll };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("the embedded database's pool", () => {
  it("sends every caller's statement at once, without waiting for the others' answers", async () => {
    const runner = heldRunner();
    const db = new Kysely<never>({ dialect: new PostgresDialect({ pool: createPGlitePool(runner.run, async () => {}) }) });
    const pending = [1, 2, 3].map((n) => sql`select ${sql.lit(n)}`.execute(db));
    await settle();
    expect(runner.sent).toEqual(["select 1", "select 2", "select 3"]);
    runner.answerAll();
    await Promise.all(pending);
  });

  it("while a transaction is open, only its statements are sent; the others go after its COMMIT", async () => {
    const runner = heldRunner();
    const db = new Kysely<never>({ dialect: new PostgresDialect({ pool: createPGlitePool(runner.run, async () => {}) }) });
    let inside!: () => void;
    const insideDone = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const transaction = db.transaction().execute(async (tx) => {
      await sql`select 'in 1'`.execute(tx);
      await insideDone;
      await sql`select 'in 2'`.execute(tx);
    });
    // Answer as statements come, until the transaction waits inside.
    for (let i = 0; i < 3; i++) {
      await settle();
      runner.answerAll();
    }
    const outside = sql`select 'outside'`.execute(db);
    await settle();
    expect(runner.sent).toEqual(["begin", "select 'in 1'"]);
    inside();
    for (let i = 0; i < 4; i++) {
      await settle();
      runner.answerAll();
    }
    await Promise.all([transaction, outside]);
    expect(runner.sent).toEqual(["begin", "select 'in 1'", "select 'in 2'", "commit", "select 'outside'"]);
  });

  it("a transaction that fails rolls back and lets the waiting statements go", async () => {
    const sent: string[] = [];
    const run: PGliteQuery = async <R>(text: string) => {
      sent.push(text);
      if (text.includes("fails")) throw Object.assign(new Error("boom"), { code: "23505" });
      return { rows: [], fields: [] } as Results<R>;
    };
    const db = new Kysely<never>({ dialect: new PostgresDialect({ pool: createPGlitePool(run, async () => {}) }) });
    const transaction = db.transaction().execute(async (tx) => {
      await sql`select 'fails'`.execute(tx);
    });
    const outside = sql`select 'outside'`.execute(db);
    await expect(transaction).rejects.toMatchObject({ code: "23505" });
    await outside;
    expect(sent).toEqual(["begin", "select 'fails'", "rollback", "select 'outside'"]);
  });
});

describe.runIf(testDatabaseKind() === "pglite")("the pool on the embedded database", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({ kind: "pglite", preparedStatements: 8 });
    await sql`create table counters (id int primary key, n int not null)`.execute(handle.db);
    await sql`insert into counters values (1, 0)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("keeps concurrent transactions whole among statements sent at once", async () => {
    const db = handle.db;
    const work = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? db.transaction().execute(async (tx) => {
            const { rows } = await sql<{ n: number }>`select n from counters where id = 1`.execute(tx);
            await sql`update counters set n = ${rows[0]!.n + 1} where id = 1`.execute(tx);
          })
        : sql<{ n: number }>`select n from counters where id = 1`.execute(db),
    );
    // A read-modify-write that another transaction's statements landed inside would lose increments.
    const failing = db
      .transaction()
      .execute(async (tx) => {
        await sql`update counters set n = n + 1000 where id = 1`.execute(tx);
        await sql`select 1 / 0`.execute(tx);
      })
      .catch((e: unknown) => e);
    await Promise.all(work);
    expect(await failing).toMatchObject({ code: "22012" });
    const { rows } = await sql<{ n: number }>`select n from counters where id = 1`.execute(db);
    expect(rows).toEqual([{ n: 10 }]);
  });
});
