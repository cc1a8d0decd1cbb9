/**
 * Where the built console is by default: beside the server's own files.
 * Packaged (Debian): /usr/lib/tern-server/console next to /usr/lib/tern-server/dist;
 * a checkout: apps/console/dist next to apps/server. Found by walking up from
 * this module (a bundle chunk or a source file) to the server's package.json.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export function defaultConsoleDir(from = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const packaged = path.join(dir, "console");
  const checkout = path.resolve(dir, "..", "console", "dist");
  return existsSync(path.join(packaged, "index.html")) ? packaged : checkout;
}
