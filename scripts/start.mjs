/**
 * `npm start`: builds the server if its sources changed (turbo's cache makes this a no-op otherwise), then runs
 * the built server (apps/server/dist/main.js) in this same process.
 *
 * package.json starts this with `exec node …`, so npm's child is this process itself, not a shell: npm forwards
 * SIGTERM/SIGINT to its child, and a shell in between would die of it and leave the server orphaned. While turbo
 * builds, a signal is passed on to turbo and we exit after it; once the server runs, its own handlers (main.ts) stop
 * it gracefully.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const turbo = spawn(
  path.join(root, "node_modules", ".bin", "turbo"),
  ["run", "build", "--filter=@tern/server", "--output-logs=errors-only", "--log-prefix=none"],
  {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1", DO_NOT_TRACK: "1" },
  },
);
const forward = (signal) => turbo.kill(signal);
process.on("SIGTERM", forward);
process.on("SIGINT", forward);
const [code, signal] = await new Promise((resolve) => turbo.once("exit", (c, s) => resolve([c, s])));
process.off("SIGTERM", forward);
process.off("SIGINT", forward);
if (signal || code !== 0) {
  if (!signal) console.error(`npm start: the build failed (turbo exit ${code}); see its output above`);
  process.exit(code ?? 1);
}

await import(pathToFileURL(path.join(root, "apps", "server", "dist", "main.js")).href);
