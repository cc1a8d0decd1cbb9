/**
 * A fresh, isolated, migrated database for one test file: a new in-memory
 * PGlite from the template dump (pglite-template.ts), or a copy of the
 * migrated template database (postgres-template.ts) on the PostgreSQL server
 * of TERN_TEST_DATABASE_URL that is dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import pg from "pg";
import { inject } from "vitest";
import { ServerConfig } from "../../src/config.ts";
import { type DatabaseHandle, type DatabaseKind, openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated template database's name (postgres-template.ts). */
    postgresTemplate: string;
  }
}

export function testDatabaseKind(): DatabaseKind {
  return process.env.TERN_TEST_DB === "postgres" ? "postgres" : "pglite";
}

function postgresServerUrl(): string {
  const url = process.env.TERN_TEST_DATABASE_URL;
  if (!url) throw new Error("TERN_TEST_DATABASE_URL is not set");
  return url;
}

/** A URL naming another database on the same server. */
export function urlForDatabase(name: string): string {
  const url = new URL(postgresServerUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresServerUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a database on the test server, empty or as a copy of `template`;
 * returns its name and a function that drops it.
 */
export async function createPostgresDatabase(
  prefix = "tern_test",
  template?: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`create database ${name}${template ? ` template ${template}` : ""}`));
  return {
    name,
    url: urlForDatabase(name),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

export async function openTestDatabase(): Promise<DatabaseHandle> {
  if (testDatabaseKind() === "pglite") {
    const template = await readFile(inject("pgliteTemplate"));
    // Statements kept prepared as the server's default keeps them: every test on PGlite runs with them.
    const preparedStatements = ServerConfig.shape.TERN_DB_PREPARED_STATEMENTS.parse(undefined);
    const handle = await openDatabase({ kind: "pglite", loadDataDir: new Blob([template]), preparedStatements });
    await migrateToLatest(handle.db as never);
    return handle;
  }
  const created = await createPostgresDatabase("tern_test", inject("postgresTemplate"));
  // Statements prepared as the server's default prepares them: every test on PostgreSQL runs with them.
  const preparedStatements = ServerConfig.shape.TERN_DB_PREPARED_STATEMENTS.parse(undefined);
  const handle = await openDatabase({ kind: "postgres", url: created.url, poolSize: 5, preparedStatements });
  return {
    ...handle,
    async close() {
      await handle.close();
      await created.drop();
    },
  };
}
