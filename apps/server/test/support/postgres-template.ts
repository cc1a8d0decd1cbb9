/**
 * vitest globalSetup of the PostgreSQL project: builds one migrated database
 * on the test server; each test file gets its own copy of it (CREATE DATABASE
 * … TEMPLATE, about 0.1 s) instead of running the migrations (about 1 s).
 */
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createPostgresDatabase } from "./test-database.ts";

export default async function setup(project: TestProject) {
  const created = await createPostgresDatabase("tern_template");
  const handle = await openDatabase({ kind: "postgres", url: created.url, poolSize: 1 });
  try {
    await migrateToLatest(handle.db as never);
  } finally {
    // A template must have no connections while it is copied.
    await handle.close();
  }
  project.provide("postgresTemplate", created.name);
  return () => created.drop();
}
