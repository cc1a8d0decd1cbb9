/**
 * The browser of the tests: Debian's Chromium (never one downloaded by
 * Playwright), from TERN_CHROMIUM or /usr/bin/chromium, with the flags that
 * keep it off the network and quiet on a closed machine. Without it the tests
 * are skipped with a message, unless TERN_REQUIRE_PRIVILEGED (set by .ci/run)
 * says that everything must run: then its absence is a failure.
 */
import { existsSync } from "node:fs";

export const chromiumPath = process.env.TERN_CHROMIUM ?? "/usr/bin/chromium";
export const hasChromium = existsSync(chromiumPath);
export const mustRun = Boolean(process.env.TERN_REQUIRE_PRIVILEGED);
export const missingChromium = `Chromium not found at ${chromiumPath}: install Debian's chromium (apt-get install chromium; .ci/run does) or set TERN_CHROMIUM`;

export const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
