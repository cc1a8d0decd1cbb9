/** Answers' security headers, CORS, the offline docs page, the API rate limit, 413 over a real socket, /metrics access. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { createTestServer, useTestServer } from "../support/test-server.ts";

const t = useTestServer();

describe("security headers and CORS", () => {
  it("every answer carries the security headers and a strict Content-Security-Policy", async () => {
    for (const path of ["/api/organizations", "/api/nope", "/api/docs"]) {
      const res = await t.api("GET", path, { token: t.admin.token });
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  it("the docs page loads Swagger UI from this server, with no inline script", async () => {
    const page = await t.api("GET", "/api/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, inline] of scripts) {
      expect(inline?.trim()).toBe("");
      expect(attrs).toMatch(/src="\/api\/docs\//);
    }
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const [path, type] of [
      ["/api/docs/init.js", "javascript"],
      ["/api/docs/assets/swagger-ui-bundle.js", "javascript"],
      ["/api/docs/assets/swagger-ui.css", "css"],
    ]) {
      const res = await t.api("GET", path!);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toContain(type!);
    }
    expect((await t.api("GET", "/api/docs/init.js")).text).toContain("/api/openapi.json");
    expect((await t.api("GET", "/api/docs/assets/package.json")).status).toBe(404);
  });

  it("CORS is off unless origins are allowed; then only those get CORS headers", async () => {
    const preflight = { "access-control-request-method": "POST", origin: "https://noc.example.net" };
    const off = await t.app.request("/api/organizations", { method: "OPTIONS", headers: preflight });
    expect(off.headers.get("access-control-allow-origin")).toBeNull();
    const on = await createTestServer({ TERN_CORS_ORIGINS: "https://noc.example.net" });
    try {
      const allowed = await on.app.request("/api/organizations", { method: "OPTIONS", headers: preflight });
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://noc.example.net");
      const other = await on.app.request("/api/organizations", {
        method: "OPTIONS",
        headers: { ...preflight, origin: "https://evil.example" },
      });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await on.close();
    }
  });
});

describe("API rate limit", () => {
  it("per token: 429 RATE_LIMITED with Retry-After and RateLimit headers; another token is not affected", async () => {
    const limited = await createTestServer({
      TERN_API_RATE_TOKEN: "3",
      TERN_API_RATE_ADDRESS: "1000",
      TERN_API_RATE_WINDOW: "60",
    });
    try {
      const other = await limited.addMember("viewer");
      // addMember already spent some of the admin token's budget: count down from where it is.
      let remaining = Number.POSITIVE_INFINITY;
      for (;;) {
        const res = await limited.api("GET", "/api/organizations", { token: limited.admin.token });
        expect(res.status).toBe(200);
        expect(res.headers.get("ratelimit-limit")).toBe("3");
        expect(res.headers.get("ratelimit-policy")).toBe("3;w=60");
        const now = Number(res.headers.get("ratelimit-remaining"));
        expect(now).toBeLessThan(remaining);
        remaining = now;
        if (remaining === 0) break;
      }
      const over = await limited.api<{ code: string }>("GET", "/api/organizations", { token: limited.admin.token });
      expect(over.status).toBe(429);
      expect(over.body.code).toBe("RATE_LIMITED");
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(over.headers.get("ratelimit-remaining")).toBe("0");
      expect((await limited.api("GET", "/api/organizations", { token: other.token })).status).toBe(200);
      // Health checks are not counted.
      expect((await limited.api("GET", "/api/health")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("per client address, whatever the token; login keeps its own stricter limit behind it", async () => {
    const limited = await createTestServer({ TERN_API_RATE_TOKEN: "1000", TERN_API_RATE_ADDRESS: "5" });
    try {
      // The test server's login and addMember already spent some of the address's budget.
      let status = 200;
      for (let i = 0; i < 6 && status !== 429; i++) {
        status = (await limited.api("GET", "/api/organizations", { token: `forged-${i}` })).status;
      }
      expect(status).toBe(429);
      const login = await limited.api<{ code: string }>("POST", "/api/users/login", {
        body: { username: "a@b.c", password: "x" },
      });
      expect(login.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

/** One HTTP request on an agent's socket; resolves with status and headers, or rejects on a reset. */
function send(agent: http.Agent, port: number, body: string): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: "127.0.0.1",
        method: "POST",
        path: "/api/organizations",
        agent,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("over a real socket", () => {
  it("after a 413 the connection is closed (Connection: close), so the next request on a keep-alive agent works", async () => {
    const small = await createTestServer({ TERN_MAX_BODY_BYTES: "1000" });
    const server = serve({ fetch: small.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const big = await send(agent, port, JSON.stringify({ name: "x", description: "y".repeat(100_000) }));
      expect(big.status).toBe(413);
      expect(big.headers.connection).toBe("close");
      for (let i = 0; i < 3; i++) expect((await send(agent, port, "{}")).status).toBe(401);
    } finally {
      agent.destroy();
      await new Promise((r) => server.close(r));
      await small.close();
    }
  });

  it("/metrics without a token answers direct loopback clients only", async () => {
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    try {
      const local = await fetch(url);
      expect(local.status).toBe(200);
      expect(await local.text()).toContain("# TYPE");
      const proxied = await fetch(url, { headers: { "x-forwarded-for": "203.0.113.9" } });
      expect(proxied.status).toBe(403);
      expect(((await proxied.json()) as { code: string }).code).toBe("FORBIDDEN");
    } finally {
      await new Promise((r) => server.close(r));
    }
    // No socket at all (not a loopback client): refused.
    expect((await t.app.request("/metrics")).status).toBe(403);
  });
});
