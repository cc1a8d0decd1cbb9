/**
 * Starts the stack (stack.ts) in a child process before the tests and stops it
 * after; its StackInfo goes to the tests in TERN_E2E_STACK. Skipped without
 * Chromium (the tests skip themselves then), a failure when the run must be complete.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hasChromium, missingChromium, mustRun } from "./browser.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!hasChromium) {
    if (mustRun) throw new Error(`${missingChromium} (TERN_REQUIRE_PRIVILEGED is set: the browser tests must run)`);
    console.warn(`console browser tests skipped: ${missingChromium}`);
    return async () => {};
  }
  if (!existsSync(path.join(here, "../../dist/index.html")))
    throw new Error("apps/console/dist is missing: run `npm run build -w @tern/console` first (turbo does)");
  const dir = await mkdtemp(path.join(tmpdir(), "tern-console-stack-"));
  const infoFile = path.join(dir, "info.json");
  const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "stack.ts"), infoFile], {
    stdio: ["pipe", "inherit", "inherit"],
    cwd: path.join(here, "../.."),
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (existsSync(infoFile)) break;
    if (child.exitCode !== null) throw new Error(`the test stack exited with code ${child.exitCode} before it was ready`);
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error("the test stack was not ready within 120 s");
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  process.env.TERN_E2E_STACK = await readFile(infoFile, "utf8");
  return async () => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };
}
