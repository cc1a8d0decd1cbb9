/**
 * Every server test runs twice: on embedded PGlite (project "pglite") and on a
 * PostgreSQL server (project "postgres", when TERN_TEST_DATABASE_URL is set;
 * CI sets it). Without it the PostgreSQL run is skipped with a message, or
 * fails when TERN_REQUIRE_PRIVILEGED=1 as in CI.
 *
 * Two files run at a time even on two cores (vitest's default there is one):
 * a file spends much of its time waiting on its database and timers, and the
 * suite ran in 1,041 s instead of 1,634 s this way. Each file has its own
 * database, so files do not share state through it.
 *
 * Files share a worker's modules (isolate: false): importing the server's
 * module graph afresh for every file cost about 2.2 s a file, 717 s of the
 * 1,307 s the suite took in CI (2026-12-04), against 40 s shared. So test
 * support keeps no per-file assumptions in module state (counters run on
 * across files), and a test that changes process-wide state puts it back.
 */
import { defineConfig } from "vitest/config";

const postgresUrl = process.env.TERN_TEST_DATABASE_URL;
if (!postgresUrl) {
  const message =
    "@tern/server: the PostgreSQL run of the server tests is skipped: set TERN_TEST_DATABASE_URL=postgres://… to run them on PostgreSQL as well";
  if (process.env.TERN_REQUIRE_PRIVILEGED === "1") throw new Error(`${message} (TERN_REQUIRE_PRIVILEGED=1 makes this a failure)`);
  console.warn(message);
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: "pglite", env: { TERN_TEST_DB: "pglite" }, globalSetup: ["test/support/pglite-template.ts"] },
      },
      ...(postgresUrl
        ? [
            {
              extends: true as const,
              test: { name: "postgres", env: { TERN_TEST_DB: "postgres" }, globalSetup: ["test/support/postgres-template.ts"] },
            },
          ]
        : []),
    ],
  },
});
