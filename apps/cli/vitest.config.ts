/**
 * The CLI's tests spawn the bundled `tern` (built once by test/support/build.ts)
 * against a real server started by the test, on embedded PGlite (project
 * "pglite") and, when TERN_TEST_DATABASE_URL is set, on PostgreSQL (project
 * "postgres"). The PGlite and PostgreSQL templates are the server's.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "vitest/config";

const serverDir = path.dirname(createRequire(import.meta.url).resolve("@tern/server/package.json"));
const postgresUrl = process.env.TERN_TEST_DATABASE_URL;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two files at a time even on two cores (vitest's default there is one): a file mostly waits on its server.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "pglite",
          env: { TERN_TEST_DB: "pglite" },
          globalSetup: [path.join(serverDir, "test/support/pglite-template.ts"), "test/support/build.ts"],
        },
      },
      ...(postgresUrl
        ? [
            {
              extends: true as const,
              test: {
                name: "postgres",
                env: { TERN_TEST_DB: "postgres" },
                globalSetup: [path.join(serverDir, "test/support/postgres-template.ts"), "test/support/build.ts"],
              },
            },
          ]
        : []),
    ],
  },
});
