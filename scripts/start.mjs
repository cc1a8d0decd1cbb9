/**
 * `npm start`: builds the server, and the web console when the checkout has apps/console with a build script, if
 * their sources changed (turbo's cache makes this a no-op otherwise), then runs the built server
 * (apps/server/dist/main.js) in this same process; it serves the console's dist at /.
 *
 * package.json starts this with `exec node …`, so npm's child is this process itself, not a shell: npm forwards
 * SIGTERM/SIGINT to its child, and a shell in between would die of it and leave the server orphaned. While turbo
 * builds, a signal is passed on to turbo and we exit after it; once the server runs, its own handlers (main.ts) stop
 * it gracefully.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The web console's workspace, when the checkout has one that builds (the server serves its dist at /). */
function consoleWorkspace() {
  const file = path.join(root, "apps", "console", "package.json");
  if (!existsSync(file)) return null;
  const pkg = JSON.parse(readFileSync(file, "utf8"));
  return pkg.name && pkg.scripts?.build ? pkg.name : null;
}
const consoleName = consoleWorkspace();
const filters = ["--filter=@tern/server", ...(consoleName ? [`--filter=${consoleName}`] : [])];
const turbo = spawn(
  path.join(root, "node_modules", ".bin", "turbo"),
  ["run", "build", ...filters, "--output-logs=errors-only", "--log-prefix=none"],
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
