import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // Lab tests measure delay and loss on a 2-core machine: one file at a time keeps the figures honest.
    fileParallelism: false,
  },
});
