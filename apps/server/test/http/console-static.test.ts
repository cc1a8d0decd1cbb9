/**
 * The built console served at `/` from TERN_CONSOLE_DIR (a temporary build
 * here): hashed assets cached for a year, index.html revalidated, the SPA
 * fallback for client-side paths, nothing outside the build, the API and its
 * docs untouched, and the CSP the console runs under.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { defaultConsoleDir } from "../../src/http/console/console-dir.ts";
import { mountConsole } from "../../src/http/console/serve-console.ts";
import { useTestServer } from "../support/test-server.ts";

// The build in a folder of its own, with a file beside it that must not be served; all removed after the file's tests.
const root = mkdtempSync(path.join(tmpdir(), "tern-console-"));
const dist = path.join(root, "dist");
mkdirSync(path.join(dist, "assets"), { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));
const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>';
writeFileSync(path.join(dist, "index.html"), INDEX);
writeFileSync(path.join(dist, "assets", "index-abc123.js"), "console.log('console');\n");
writeFileSync(path.join(dist, "assets", "index-abc123.css"), "body{margin:0}\n");
writeFileSync(path.join(dist, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
writeFileSync(path.join(root, "secret-beside-the-build.txt"), "not yours");

const t = useTestServer({ TERN_CONSOLE_DIR: dist });
const html = { accept: "text/html,application/xhtml+xml" };
const NONCE_TAG = /\n {4}<meta name="tern-csp-nonce" content="([A-Za-z0-9+/=]{24})" \/>/;
const nonceOf = (text: string) => NONCE_TAG.exec(text)?.[1] ?? "no nonce";
const withoutNonce = (text: string) => text.replace(NONCE_TAG, "");

describe("the web console's files", () => {
  it("GET / answers index.html, revalidated, under a CSP that allows only this origin's scripts", async () => {
    const res = await t.api("GET", "/", { headers: html });
    expect(res.status).toBe(200);
    expect(withoutNonce(res.text)).toBe(INDEX);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).not.toMatch(/unsafe-inline/);
    // Style elements only with this answer's nonce (the component library's CSS variables), a new one each time.
    const nonce = nonceOf(res.text);
    expect(csp).toMatch(new RegExp(`style-src 'self' 'nonce-${nonce.replace(/[+/]/g, "\\$&")}'(;|$)`));
    const again = await t.api("GET", "/index.html", { headers: html });
    expect(nonceOf(again.text)).not.toBe(nonce);
    expect(again.headers.get("content-security-policy")).toContain(`'nonce-${nonceOf(again.text)}'`);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
  });

  it("hashed assets are cached for a year with their type; other files are revalidated", async () => {
    const js = await t.api("GET", "/assets/index-abc123.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const css = await t.api("GET", "/assets/index-abc123.css");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    const icon = await t.api("GET", "/favicon.svg");
    expect(icon.status).toBe(200);
    expect(icon.headers.get("cache-control")).toBe("no-cache");
  });

  it("client-side paths that accept HTML get index.html; a missing asset, /api and /metrics do not", async () => {
    for (const p of ["/devices", "/devices/1f9c0e9e-0000-4000-8000-000000000000", "/signin", "/organization"]) {
      const res = await t.api("GET", p, { headers: html });
      expect(res.status, p).toBe(200);
      expect(withoutNonce(res.text), p).toBe(INDEX);
    }
    const missingAsset = await t.api("GET", "/assets/gone-000.js", { headers: html });
    expect(missingAsset.status).toBe(404);
    const notHtml = await t.api("GET", "/devices", { headers: { accept: "application/json" } });
    expect(notHtml.status).toBe(404);
    const api = await t.api<{ code: string }>("GET", "/api/nothing-here", { headers: html });
    expect(api.status).toBe(404);
    expect(api.body.code).toBe("NOT_FOUND");
    const post = await t.api("POST", "/devices", { headers: html });
    expect(post.status).toBe(404);
  });

  it("nothing outside the build is reachable", async () => {
    for (const p of [
      "/../secret-beside-the-build.txt",
      "/%2e%2e/secret-beside-the-build.txt",
      "/assets/..%2f..%2fsecret-beside-the-build.txt",
    ]) {
      const res = await t.api("GET", p);
      expect(res.text, p).not.toContain("not yours");
    }
  });

  it("the API and its docs page (with its own local assets) still work under the CSP", async () => {
    expect((await t.api("GET", "/api/health")).status).toBe(200);
    const docs = await t.api("GET", "/api/docs", { headers: html });
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("/api/docs/assets/swagger-ui-bundle.js");
    expect(docs.text).not.toMatch(/https?:\/\//);
    const bundle = await t.api("GET", "/api/docs/assets/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
  });

  it("without a build: a clear log line, no crash, and / is a 404", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (s: string) => lines.push(s) });
    const { Hono } = await import("hono");
    const app = new Hono();
    expect(mountConsole(app as never, path.join(dist, "does-not-exist"), logger)).toBe(false);
    expect(lines.join("")).toMatch(/no web console build found/);
    expect((await app.request("/", { headers: html })).status).toBe(404);
  });

  it("the default directory is apps/console/dist in a checkout", () => {
    expect(defaultConsoleDir()).toBe(path.resolve(import.meta.dirname, "../../../console/dist"));
  });
});
