/**
 * A new embedded database is made by a child process (db/pglite-initdb.ts) and renamed into place: the server
 * opens a complete database or none, and a failed initdb leaves nothing behind. Embedded only: the PostgreSQL
 * project has no data directory to make.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.ts";
import { createDataDirInChild, isDataDir } from "../../src/db/pglite-initdb.ts";
import { testDatabaseKind } from "../support/test-database.ts";

let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), "tern-initdb-"));
});
afterAll(() => rm(parent, { recursive: true, force: true }));

describe.runIf(testDatabaseKind() === "pglite")("a new embedded database", () => {
  it("is made by initdb in a child process, renamed into place, then opened and kept across a reopen", async () => {
    const dataDir = path.join(parent, "made", "pgdata");
    const first = await openDatabase({ kind: "pglite", dataDir });
    try {
      await sql`create table kept (n int)`.execute(first.db);
      await sql`insert into kept values (42)`.execute(first.db);
    } finally {
      await first.close();
    }
    expect(isDataDir(dataDir)).toBe(true);
    // Nothing staged is left beside it.
    expect(await readdir(path.dirname(dataDir))).toEqual(["pgdata"]);
    const version = await stat(path.join(dataDir, "PG_VERSION"));

    const again = await openDatabase({ kind: "pglite", dataDir });
    try {
      const { rows } = await sql<{ n: number }>`select n from kept`.execute(again.db);
      expect(rows).toEqual([{ n: 42 }]);
    } finally {
      await again.close();
    }
    // An existing database is opened as it is, not made again.
    expect((await stat(path.join(dataDir, "PG_VERSION"))).mtimeMs).toBe(version.mtimeMs);
  });

  it("a failed initdb leaves neither a half-made database nor its staging directory, and says why", async () => {
    const dataDir = path.join(parent, "failed", "pgdata");
    await mkdir(dataDir, { recursive: true });
    await expect(createDataDirInChild(dataDir, ["-c", "shared_buffers=not-a-size"])).rejects.toThrow(
      /^creating the embedded database in .*failed: ./,
    );
    expect(await readdir(path.dirname(dataDir))).toEqual(["pgdata"]);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it("refuses a directory that holds files but no database, and touches none of them", async () => {
    const dataDir = path.join(parent, "foreign");
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, "notes.txt"), "mine");
    await expect(createDataDirInChild(dataDir, [])).rejects.toThrow(/is neither empty nor a PostgreSQL data directory/);
    expect(await readdir(dataDir)).toEqual(["notes.txt"]);
    expect(await readFile(path.join(dataDir, "notes.txt"), "utf8")).toBe("mine");
  });
});
