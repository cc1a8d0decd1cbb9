import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // The end-to-end scenarios have their own command (vitest.scenarios.config.ts, `npm run test:scenarios`).
    exclude: ["test/scenarios/**", "**/node_modules/**"],
    // Lab tests measure delay and loss on a 2-core machine: one file at a time keeps the figures honest.
    fileParallelism: false,
  },
});
