/**
 * GET /api/docs: Swagger UI served from the swagger-ui-dist package, not a
 * CDN, so it works offline and under the strict Content-Security-Policy
 * (no inline script: the page loads a fixed init script of its own).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Hono } from "hono";

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

function distDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve("swagger-ui-dist/package.json"));
}

function page(base: string, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${base}/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="${base}/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/assets/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
}

function initScript(specUrl: string): string {
  return `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: "#swagger-ui", deepLinking: true });\n`;
}

/** Mounts the page at `base` (e.g. /api/docs), its init script and the package's assets. */
export function mountDocsPage(app: Hono<never>, base: string, specUrl: string, title = "Tern API"): void {
  const dir = distDir();
  const cache = new Map<string, Promise<Buffer>>();
  const asset = (name: string) => {
    let file = cache.get(name);
    if (!file) {
      file = readFile(path.join(dir, name));
      cache.set(name, file);
    }
    return file;
  };
  const html = page(base, title);
  const init = initScript(specUrl);
  app.get(base, (c) => c.html(html));
  app.get(`${base}/init.js`, (c) => c.body(init, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get(`${base}/assets/:name`, async (c) => {
    const name = c.req.param("name");
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) return c.notFound();
    const body = await asset(name);
    return c.body(new Uint8Array(body), 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
}
