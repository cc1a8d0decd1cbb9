import { describe, expect, it } from "vitest";
import { pingArgv } from "../../src/control/diagnostics/ping.ts";
import { parsePing } from "../../src/control/diagnostics.ts";
import { createUiApp } from "../../src/ui/index.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { sampleUiData } from "../support/ui-data.ts";

const SECRET = "correct horse battery";

function setup() {
  const runner = new FakeRunner();
  const data = sampleUiData(runner);
  return { runner, data, app: createUiApp({ data, secret: SECRET }) };
}

async function login(app: ReturnType<typeof setup>["app"], password = SECRET) {
  const res = await app.request("/login", { method: "POST", body: new URLSearchParams({ password }) });
  return { res, cookie: res.headers.get("set-cookie")?.split(";")[0] ?? null };
}

describe("troubleshooting page: security", () => {
  it("refuses unauthenticated access", async () => {
    const { app } = setup();
    const page = await app.request("/");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/login");
    const api = await app.request("/api/status");
    expect(api.status).toBe(401);
    expect(await api.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    expect((await app.request("/api/status", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await app.request("/api/status", { headers: { cookie: "tern_ui=forged" } })).status).toBe(401);
  });

  it("rejects a wrong password and sets no session", async () => {
    const { app } = setup();
    const { res, cookie } = await login(app, "nope");
    expect(res.headers.get("location")).toBe("/login?error=bad");
    expect(cookie).toBeNull();
  });

  it("logs in with the password into an HttpOnly SameSite=Strict session, and logs out", async () => {
    const { app } = setup();
    const { res, cookie } = await login(app);
    expect(res.headers.get("location")).toBe("/");
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly/);
    expect(res.headers.get("set-cookie")).toMatch(/SameSite=Strict/);
    const page = await app.request("/", { headers: { cookie: cookie! } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
    await app.request("/logout", { method: "POST", headers: { cookie: cookie! } });
    expect((await app.request("/api/status", { headers: { cookie: cookie! } })).status).toBe(401);
  });

  it("accepts the secret as a bearer token for the API", async () => {
    const { app } = setup();
    const res = await app.request("/api/status", { headers: { authorization: `Bearer ${SECRET}` } });
    expect(res.status).toBe(200);
  });

  it("requires the X-Tern-UI header on POSTs (no cross-site forms) and validates targets", async () => {
    const { app, data } = setup();
    const { cookie } = await login(app);
    const post = (body: unknown, headers: Record<string, string> = { "x-tern-ui": "1" }) =>
      app.request("/api/ping", {
        method: "POST",
        body: JSON.stringify(body),
        headers: { cookie: cookie!, "content-type": "application/json", ...headers },
      });
    expect((await post({ target: "127.0.0.1" }, {})).status).toBe(403);
    for (const target of ["127.0.0.1; reboot", "-f", "example.com", "300.1.1.1", 42]) {
      const r = await post({ target });
      expect(r.status, String(target)).toBe(400);
      expect(await r.json()).toMatchObject({ code: "VALIDATION_FAILED" });
    }
    expect(data.pings).toEqual([]);
    const ok = await post({ target: "127.0.0.1" });
    // The real ping, against loopback.
    expect(await ok.json()).toMatchObject({ transmitted: 4, received: 4, lossPercent: 0 });
    expect(data.pings).toEqual(["127.0.0.1"]);
  });

  it("refuses a short secret", () => {
    expect(() => createUiApp({ data: setup().data, secret: "short" })).toThrow(/at least 8/);
  });
});

describe("troubleshooting page: data", () => {
  it("serves the status the data source gives", async () => {
    const { app } = setup();
    const res = await app.request("/api/status", { headers: { authorization: `Bearer ${SECRET}` } });
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["bgp", "connection", "errors", "interfaces", "tunnels", "vrrp"]);
    expect(body.tunnels).toEqual([
      {
        id: "t-301",
        name: "branch-a ↔ hq",
        up: true,
        loss: 1.667,
        rtt: 23.456,
        srttMs: 22.1,
        jitter: 3.21,
        samples: 60,
        target: "10.100.0.5",
      },
    ]);
  });
});

describe("diagnostics", () => {
  it("parses ping summaries, with duplicates and at 100 % loss", () => {
    expect(
      parsePing(
        "5 packets transmitted, 4 received, +1 duplicates, 20% packet loss, time 4005ms\nrtt min/avg/max/mdev = 1.1/2.25/3.0/0.4 ms",
      ),
    ).toEqual({
      transmitted: 5,
      received: 4,
      lossPercent: 20,
      rttAvgMs: 2.25,
    });
    expect(parsePing("3 packets transmitted, 0 received, 100% packet loss, time 2030ms")).toEqual({
      transmitted: 3,
      received: 0,
      lossPercent: 100,
      rttAvgMs: null,
    });
  });

  it("builds ping's argv from the options, the target after --", () => {
    expect(
      pingArgv({ target: "10.0.0.1", count: 3, intervalMs: 200, waitMs: 1000, source: "10.0.0.2", ipVersion: 4 }).join(" "),
    ).toBe("ping -n -O -c 3 -i 0.2 -W 1 -4 -I 10.0.0.2 -- 10.0.0.1");
  });

  it("refuses what the protocol refuses before anything runs: a name (the page takes IPv4 literals)", async () => {
    const { app, data } = setup();
    const r = await app.request("/api/ping", {
      method: "POST",
      body: JSON.stringify({ target: "localhost" }),
      headers: { authorization: `Bearer ${SECRET}`, "x-tern-ui": "1", "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(data.pings).toEqual([]);
  });
});
