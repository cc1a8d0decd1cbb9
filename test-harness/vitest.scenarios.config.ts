import { defineConfig } from "vitest/config";

/**
 * The end-to-end scenarios (issue 7): real server, real agents, real daemons
 * in network namespaces, driven through the REST API. One lab per file, one
 * file at a time (two cores; the measurements need a quiet host).
 */
export default defineConfig({
  test: {
    include: ["test/scenarios/**/*.scenarios.test.ts"],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
