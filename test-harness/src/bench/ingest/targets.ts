/** Where ingestion baselines write: a PostgreSQL server through `pg`, or PGlite in the worker's process. */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import copyStreams from "pg-copy-streams";
import { COLUMNS, copyText, insertParams, insertSql, type SampleRows, unnestParams, unnestSql } from "./rows.ts";

export interface IngestTarget {
  version(): Promise<string>;
  exec(sql: string): Promise<void>;
  count(table: string): Promise<number>;
  insert(table: string, rows: SampleRows, start: number, end: number): Promise<void>;
  unnest(table: string, rows: SampleRows, start: number, end: number): Promise<void>;
  copy(table: string, rows: SampleRows, start: number, end: number): Promise<void>;
  close(): Promise<void>;
}

export async function connectPostgres(url: string): Promise<IngestTarget> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  return {
    version: async () => (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v,
    exec: async (sql) => void (await client.query(sql)),
    count: async (table) => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n),
    insert: async (table, rows, start, end) =>
      void (await client.query(insertSql(table, end - start), insertParams(rows, start, end))),
    unnest: async (table, rows, start, end) => void (await client.query(unnestSql(table), unnestParams(rows, start, end))),
    copy: async (table, rows, start, end) => {
      const stream = client.query(copyStreams.from(`COPY ${table} (${COLUMNS.join(",")}) FROM STDIN`));
      await pipeline(Readable.from([copyText(rows, start, end)]), stream);
    },
    close: () => client.end(),
  };
}

/** PGlite on a data directory (the server's default is file-backed, not in-memory). */
export async function openPglite(dataDir: string): Promise<IngestTarget> {
  const db = await PGlite.create(dataDir);
  return {
    version: async () => (await db.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v,
    exec: async (sql) => void (await db.exec(sql)),
    count: async (table) => Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n),
    insert: async (table, rows, start, end) =>
      void (await db.query(insertSql(table, end - start), insertParams(rows, start, end))),
    unnest: async (table, rows, start, end) => void (await db.query(unnestSql(table), unnestParams(rows, start, end))),
    copy: async (table, rows, start, end) =>
      void (await db.query(`COPY ${table} (${COLUMNS.join(",")}) FROM '/dev/blob'`, [], {
        blob: new Blob([copyText(rows, start, end)]),
      })),
    close: () => db.close(),
  };
}
