/**
 * The embedded database in a thread of its own (db/pglite-thread): the server's thread stays free while a
 * statement runs, answers and errors come back as PGlite gives them (the database's code, constraint and detail,
 * which the API turns into 4xx), a NOTIFY reaches its listener before the statement that sent it answers, a dump
 * opens again, a failed start says why, and a closed database refuses clearly instead of hanging.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.ts";
import { startPGliteThread } from "../../src/db/pglite-thread/client.ts";
import { testDatabaseKind } from "../support/test-database.ts";

describe.runIf(testDatabaseKind() === "pglite")("the embedded database's thread", () => {
  let handle: DatabaseHandle;

  beforeAll(async () => {
    handle = await openDatabase({ kind: "pglite", preparedStatements: 8 });
    await sql`create table items (id int primary key, name text not null unique)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("keeps the server's thread free while a statement runs", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from generate_series(1, 4000000)`.execute(handle.db);
    const took = performance.now() - started;
    clearInterval(timer);
    expect(rows).toEqual([{ n: 4_000_000 }]);
    // With PGlite in this thread the statement held the loop and no timer fired until it ended.
    expect(took).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it("answers rows, counts and the database's errors with their codes", async () => {
    const inserted = await sql<{ id: number }>`insert into items (id, name) values (1, 'one'), (2, 'two') returning id`.execute(
      handle.db,
    );
    expect(inserted.rows).toEqual([{ id: 1 }, { id: 2 }]);
    // The statement's command comes back too: Kysely counts affected rows only for INSERT, UPDATE, DELETE, MERGE.
    const updated = await handle.db
      .updateTable("items" as never)
      .set({ name: sql`name` } as never)
      .executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(2n);
    const { rows } = await sql<{ id: number; name: string }>`select id, name from items where id = ${2}`.execute(handle.db);
    expect(rows).toEqual([{ id: 2, name: "two" }]);

    const duplicate = await sql`insert into items (id, name) values (${3}, ${"one"})`.execute(handle.db).catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({
      code: "23505",
      constraint: "items_name_key",
      detail: "Key (name)=(one) already exists.",
      message: expect.stringContaining("duplicate key value"),
    });
    const malformed = await sql`select ${"x"}::int`.execute(handle.db).catch((e: unknown) => e);
    expect(malformed).toMatchObject({ code: "22P02" });
    // The connection is fine afterwards, and a failed transaction left nothing behind.
    await expect(
      handle.db.transaction().execute(async (tx) => {
        await sql`insert into items (id, name) values (4, 'four')`.execute(tx);
        await sql`insert into items (id, name) values (4, 'again')`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect((await sql<{ n: number }>`select count(*)::int as n from items`.execute(handle.db)).rows).toEqual([{ n: 2 }]);
  });

  it("delivers a NOTIFY before the statement that sent it answers", async () => {
    const heard: string[] = [];
    const unlisten = await handle.pglite!.listen("thread_test", (payload) => heard.push(payload));
    await sql`select pg_notify('thread_test', 'first')`.execute(handle.db);
    expect(heard).toEqual(["first"]);
    await unlisten();
    await sql`select pg_notify('thread_test', 'second')`.execute(handle.db);
    expect(heard).toEqual(["first"]);
  });

  it("dumps the data directory, and the dump opens again", async () => {
    const dump = await handle.pglite!.dumpDataDir();
    const copy = await openDatabase({ kind: "pglite", loadDataDir: dump });
    try {
      expect((await sql<{ name: string }>`select name from items order by id`.execute(copy.db)).rows).toEqual([
        { name: "one" },
        { name: "two" },
      ]);
    } finally {
      await copy.close();
    }
  });

  it("a start that fails rejects with PGlite's error", async () => {
    await expect(startPGliteThread({ startParams: ["-c", "shared_buffers=not-a-size"], preparedStatements: 0 })).rejects.toThrow(
      "PGlite failed to initialize",
    );
  });

  it("a closed database refuses statements instead of hanging", async () => {
    const thread = await startPGliteThread({ startParams: [], preparedStatements: 0 });
    expect((await thread.query<{ one: number }>("select 1 as one", [])).rows).toEqual([{ one: 1 }]);
    await thread.close();
    expect(thread.closed).toBe(true);
    await expect(thread.query("select 1", [])).rejects.toThrow("the embedded database is closed");
  });
});
