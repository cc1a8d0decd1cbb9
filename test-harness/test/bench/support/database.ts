/**
 * The PostgreSQL server the bench smoke tests use: the one CI starts
 * (TERN_TEST_DATABASE_URL), else the bench's own, else the dev server. A test
 * skips without it, except where TERN_TEST_DATABASE_URL names it (CI): then
 * an unreachable server is an error, not a skip.
 */
import pg from "pg";
import { DEV_DATABASE_URL } from "../../../src/bench/main.ts";

export const benchDatabaseUrl = process.env.TERN_TEST_DATABASE_URL || process.env.TERN_BENCH_DATABASE_URL || DEV_DATABASE_URL;

/** Null when the server answers, else why not. */
async function reachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why the smoke test `name` cannot reach its database (it then skips), or null; throws in CI. */
export async function benchDatabaseBlocker(name: string): Promise<string | null> {
  const blocker = await reachable(benchDatabaseUrl);
  if (blocker === null) return null;
  if (process.env.TERN_TEST_DATABASE_URL) throw new Error(`TERN_TEST_DATABASE_URL is set but not reachable: ${blocker}`);
  console.warn(`${name}: skipped, ${benchDatabaseUrl} not reachable: ${blocker}`);
  return blocker;
}
