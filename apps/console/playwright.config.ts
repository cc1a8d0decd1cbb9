/**
 * Browser tests of the console (e2e/): Playwright's runner driving Debian's
 * Chromium (see e2e/support/browser.ts; the runner never downloads a
 * browser) against a real server with simulated routers (e2e/support/stack.ts).
 * One worker: the tests share one stack and the machine is small.
 */
import { defineConfig } from "@playwright/test";
import { chromiumArgs, chromiumPath } from "./e2e/support/browser.ts";

export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/support/global-setup.ts",
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    viewport: { width: 1360, height: 860 },
    trace: "off",
  },
});
