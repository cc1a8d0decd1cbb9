/** The database layer on both engines: concurrent transactions, migrations listed and idempotent, bootstrap once. */
import { readdir } from "node:fs/promises";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { MIGRATIONS, MIGRATIONS_DIR, migrateToLatest } from "../../src/db/migrate.ts";
import { bootstrapFirstAdmin } from "../../src/services/bootstrap.ts";
import { openTestDatabase } from "../support/test-database.ts";

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe("database", () => {
  it("concurrent transactions do not interleave (PGlite is one session; pg a pool)", async () => {
    const db = handle.db;
    await sql`create table counter (n int not null)`.execute(db);
    await sql`insert into counter values (0)`.execute(db);
    // Read-modify-write in each transaction: interleaved on one session, updates would be lost.
    await Promise.all(
      Array.from({ length: 20 }, () =>
        db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ n: number }>`select n from counter for update`.execute(trx);
          await new Promise((r) => setTimeout(r, 2));
          await sql`update counter set n = ${rows[0]!.n + 1}`.execute(trx);
        }),
      ),
    );
    const { rows } = await sql<{ n: number }>`select n from counter`.execute(db);
    expect(rows[0]!.n).toBe(20);
  });

  it("a failed transaction rolls back and leaves the connection usable", async () => {
    const db = handle.db;
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`insert into counter values (100)`.execute(trx);
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    const { rows } = await sql<{ c: number }>`select count(*)::int as c from counter where n = 100`.execute(db);
    expect(rows[0]!.c).toBe(0);
  });

  it("PostgreSQL sessions plan without JIT or parallel workers (short statements; a worker per list request cost more than it saved)", async () => {
    if (handle.kind !== "postgres") return; // PGlite compiles no JIT and starts no worker
    // Every connection of the pool, not only the first: hold several at once.
    const settings = await Promise.all(
      Array.from({ length: 3 }, () =>
        handle.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ jit: string; workers: string }>`select current_setting('jit') as jit,
            current_setting('max_parallel_workers_per_gather') as workers, pg_sleep(0.05)`.execute(trx);
          return { jit: rows[0]!.jit, workers: rows[0]!.workers };
        }),
      ),
    );
    expect(settings).toEqual(Array.from({ length: 3 }, () => ({ jit: "off", workers: "0" })));
  });

  it("every migration file is listed, names sort by date", async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".ts")).map((f) => f.replace(/\.ts$/, ""));
    expect(Object.keys(MIGRATIONS).sort()).toEqual(files.sort());
    for (const name of files) expect(name).toMatch(/^\d{8}-\d{3}-[a-z0-9-]+$/);
  });

  it("migrating again is a no-op, also from several callers at once", async () => {
    const results = await Promise.all([migrateToLatest(handle.db as never), migrateToLatest(handle.db as never)]);
    expect(results.flat()).toEqual([]);
  });

  it("bootstraps the first admin once, even when two starts race", async () => {
    const options = { email: "first@example.com", password: "first password", passwordHashCost: 10 };
    const [a, b] = await Promise.all([bootstrapFirstAdmin(handle.db, options), bootstrapFirstAdmin(handle.db, options)]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    const users = await handle.db.selectFrom("users").select("email").execute();
    expect(users.map((u) => u.email)).toEqual(["first@example.com"]);
    expect((await bootstrapFirstAdmin(handle.db, options)).created).toBe(false);
  });
});
