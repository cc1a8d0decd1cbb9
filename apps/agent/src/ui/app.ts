/**
 * The device-side troubleshooting page (spec 5.1.1) as a Hono app. Built and
 * exported without a port so tests call `app.request()`; server.ts listens.
 */
import { randomBytes } from "node:crypto";
import { isIPv4 } from "node:net";
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { AgentError } from "../errors.ts";
import { Sessions, secretMatches } from "./auth.ts";
import type { UiDataSource } from "./data-source.ts";
import { loginPage, mainPage } from "./page.ts";

const COOKIE = "tern_ui";
const FAIL_DELAY_MS = 400;
const MAX_FAILS = 10;
const LOCK_MS = 30_000;

export interface UiAppOptions {
  data: UiDataSource;
  /** The password/token that opens the page. */
  secret: string;
  /** Set the cookie's Secure flag (when served over TLS). */
  secureCookie?: boolean;
}

type Env = { Variables: { nonce: string } };

export function createUiApp(options: UiAppOptions): Hono<Env> {
  if (options.secret.length < 8) throw new AgentError("USAGE", "must be at least 8 characters", "ui.secret");
  const sessions = new Sessions();
  let fails = 0;
  let lockedUntil = 0;
  const app = new Hono<Env>();

  app.use("*", async (c, next) => {
    const nonce = randomBytes(16).toString("base64");
    c.set("nonce", nonce);
    await next();
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("Cache-Control", "no-store");
  });

  const authed = (c: { req: { header(n: string): string | undefined } }, cookie: string | undefined) => {
    const auth = c.req.header("authorization");
    if (auth?.startsWith("Bearer ")) return secretMatches(auth.slice(7), options.secret);
    return sessions.valid(cookie);
  };

  app.get("/login", (c) => c.html(loginPage(c.get("nonce"), c.req.query("error") ?? null)));

  app.post("/login", async (c) => {
    if (Date.now() < lockedUntil) return c.redirect("/login?error=locked", 303);
    const form = await c.req.parseBody();
    const password = typeof form.password === "string" ? form.password : "";
    if (!secretMatches(password, options.secret)) {
      if (++fails >= MAX_FAILS) {
        lockedUntil = Date.now() + LOCK_MS;
        fails = 0;
      }
      await new Promise((r) => setTimeout(r, FAIL_DELAY_MS));
      return c.redirect("/login?error=bad", 303);
    }
    fails = 0;
    setCookie(c, COOKIE, sessions.create(), {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure: options.secureCookie ?? false,
    });
    return c.redirect("/", 303);
  });

  app.post("/logout", (c) => {
    sessions.end(getCookie(c, COOKIE));
    deleteCookie(c, COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });

  app.use("/api/*", async (c, next) => {
    if (!authed(c, getCookie(c, COOKIE))) return c.json({ error: "sign in first", code: "UNAUTHENTICATED" }, 401);
    if (c.req.method !== "GET" && c.req.header("x-tern-ui") !== "1")
      return c.json({ error: "missing X-Tern-UI header", code: "FORBIDDEN" }, 403);
    await next();
  });

  app.get("/", (c) => {
    if (!authed(c, getCookie(c, COOKIE))) return c.redirect("/login", 303);
    return c.html(mainPage(c.get("nonce")));
  });

  app.get("/api/status", async (c) => {
    const { data } = options;
    const [interfaces, bgp] = await Promise.all([data.interfaces(), data.bgp()]);
    return c.json({
      connection: data.connection(),
      interfaces,
      tunnels: data.tunnels(),
      bgp,
      vrrp: data.vrrp(),
      errors: data.recentErrors(),
    });
  });

  for (const kind of ["ping", "traceroute"] as const)
    app.post(`/api/${kind}`, async (c) => {
      const body = (await c.req.json().catch(() => ({}))) as { target?: unknown };
      const bad = (message: string) => c.json({ error: message, code: "VALIDATION_FAILED" }, 400);
      // The page takes IPv4 literals only (the protocol also takes IPv6 and host names, for the server's diagnostics).
      if (typeof body.target !== "string" || !isIPv4(body.target)) return bad(`${kind}: target: must be an IPv4 address`);
      try {
        return c.json(kind === "ping" ? await options.data.ping(body.target) : await options.data.traceroute(body.target));
      } catch (e) {
        // The agent checks targets against the protocol too: nothing else reaches a command.
        if (e instanceof AgentError && e.code === "INVALID_REQUEST") return bad(e.message);
        throw e;
      }
    });

  return app;
}
