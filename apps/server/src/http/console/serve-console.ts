/**
 * Serves the built web console at `/`: hashed assets under /assets cached for
 * a year, everything else revalidated, and index.html for any other GET that
 * accepts HTML outside /api, /metrics and the device websocket (the console
 * routes on the client). Without a build it logs where it looked and serves
 * nothing (the API works as before).
 *
 * index.html carries a fresh nonce per answer (a meta tag the console reads)
 * and the answer's CSP allows style elements with that nonce only: the
 * component library (Mantine) injects its CSS variables as <style> elements,
 * which a plain 'self' policy refuses; scripts stay 'self' only.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono } from "hono";
import type { Logger } from "pino";
import { consoleContentSecurityPolicy } from "../security-headers.ts";

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
    const isIndex = c.req.path === "/" || c.req.path === "/index.html";
    const served = isIndex ? undefined : await files(c as never, async () => {});
    if (served) {
      // Vite names what it builds into assets/ by content hash: such a URL never changes what it holds.
      served.headers.set("cache-control", c.req.path.startsWith("/assets/") ? IMMUTABLE : "no-cache");
      return served;
    }
    if (c.req.path.startsWith("/assets/")) return next();
    const wantsHtml = (c.req.header("accept") ?? "").includes("text/html");
    if (!wantsHtml && c.req.path !== "/") return next();
    const nonce = randomBytes(16).toString("base64");
    const html = (await index()).replace("<head>", `<head>\n    <meta name="tern-csp-nonce" content="${nonce}" />`);
    return c.html(html, 200, {
      "cache-control": "no-cache",
      "content-security-policy": consoleContentSecurityPolicy(nonce),
    });
  });
  logger.info({ consoleDir: root }, "serving the web console at /");
  return true;
}
