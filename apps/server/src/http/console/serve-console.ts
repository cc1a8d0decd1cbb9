/**
 * Serves the built web console at `/`: hashed assets under /assets cached for
 * a year, everything else revalidated, and index.html for any other GET that
 * accepts HTML outside /api, /metrics and the device websocket (the console
 * routes on the client). Without a build it logs where it looked and serves
 * nothing (the API works as before).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono } from "hono";
import type { Logger } from "pino";

const IMMUTABLE = "public, max-age=31536000, immutable";
/** Paths that are never the console's (the SPA fallback leaves them to their own 404). */
const NOT_CONSOLE = /^\/(api|metrics|ws)(\/|$)/;

export function mountConsole(app: Hono<never>, dir: string, logger: Logger): boolean {
  const root = path.resolve(dir);
  const indexFile = path.join(root, "index.html");
  if (!existsSync(indexFile)) {
    logger.warn(
      { consoleDir: root },
      "no web console build found: GET / answers 404 (build it with `npm run build -w @tern/console`, or set TERN_CONSOLE_DIR)",
    );
    return false;
  }
  const files = serveStatic({ root });
  // index.html is read per request (a rebuilt console shows up without a restart) and never cached.
  const index = async () => readFile(indexFile, "utf8");
  app.on(["GET", "HEAD"], "*", async (c, next) => {
    if (NOT_CONSOLE.test(c.req.path)) return next();
    const served = await files(c as never, async () => {});
    if (served) {
      // Vite names what it builds into assets/ by content hash: such a URL never changes what it holds.
      served.headers.set("cache-control", c.req.path.startsWith("/assets/") ? IMMUTABLE : "no-cache");
      return served;
    }
    if (c.req.path.startsWith("/assets/")) return next();
    const wantsHtml = (c.req.header("accept") ?? "").includes("text/html");
    if (!wantsHtml && c.req.path !== "/") return next();
    return c.html(await index(), 200, { "cache-control": "no-cache" });
  });
  logger.info({ consoleDir: root }, "serving the web console at /");
  return true;
}
