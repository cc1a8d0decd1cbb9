/**
 * The troubleshooting page in headless Chromium (Debian's /usr/bin/chromium
 * driven by playwright-core): sign in, see the data, ping, and be refused
 * without a session. Ping runs for real against 127.0.0.1 through the runner.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecRunner } from "../../src/runner.ts";
import { startUiServer, type UiServer } from "../../src/ui/index.ts";
import { sampleUiData } from "../support/ui-data.ts";

const enabled = privilegedTestsEnabled("ui chromium test", ["chromium", "ping", "traceroute"]);
const SECRET = "lab-ui-secret-123";

describe.runIf(enabled)("troubleshooting page in Chromium", () => {
  let server: UiServer;
  let browser: BrowserContext;
  let profile: string;
  const data = sampleUiData(new ExecRunner());

  beforeAll(async () => {
    server = await startUiServer({ data, secret: SECRET, port: 0 });
    profile = await mkdtemp(join(tmpdir(), "tern-ui-chromium-"));
    // A persistent context is how playwright takes a fresh --user-data-dir of our own.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it("refuses access without signing in", async () => {
    await browser.clearCookies();
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    const api = await page.request.get(`${server.url}/api/status`);
    expect(api.status()).toBe(401);
    await page.fill("#password", "wrong-password");
    await page.click("#login-btn");
    await expect.poll(() => page.textContent("#login-error")).toBe("Wrong password.");
    await page.close();
  }, 30_000);

  it("signs in, shows connection, interfaces, tunnel quality, BGP, VRRP and errors, and pings", async () => {
    await browser.clearCookies();
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    await page.goto(`${server.url}/`);
    await page.fill("#password", SECRET);
    await page.click("#login-btn");
    await page.waitForSelector("#tunnels td");
    expect(new URL(page.url()).pathname).toBe("/");

    const text = (sel: string) => page.locator(sel).innerText();
    expect(await text("#connection")).toContain("connected");
    expect(await text("#connection")).toContain("ab12cd34ef56");
    expect(await text("#interfaces")).toMatch(/wan0\s+up\s+10\.100\.1\.2\/24/);
    const tunnels = await text("#tunnels");
    expect(tunnels).toContain("branch-a ↔ hq");
    expect(tunnels).toContain("1.667 %");
    expect(tunnels).toContain("23.46 ms");
    expect(tunnels).toContain("3.21 ms");
    expect(await text("#bgp")).toMatch(/10\.100\.2\.2\s+65002\s+up/);
    expect(await text("#vrrp")).toContain("MASTER");
    // Error text is shown as text, never run as markup.
    expect(await text("#errors")).toContain("<script>alert(1)</script>");

    await page.fill("#diag-target", "127.0.0.1");
    await page.click("#ping-btn");
    await expect
      .poll(() => text("#diag-output"), { timeout: 15_000 })
      .toMatch(/4 packets transmitted, 4 received, 0% packet loss/);
    expect(data.pings).toEqual(["127.0.0.1"]);

    await page.fill("#diag-target", "127.0.0.1; reboot");
    await page.click("#ping-btn");
    await expect.poll(() => text("#diag-output")).toMatch(/error: ping: target: /);

    await page.fill("#diag-target", "127.0.0.1");
    await page.click("#traceroute-btn");
    await expect.poll(() => text("#diag-output"), { timeout: 20_000 }).toMatch(/traceroute to 127\.0\.0\.1/);
    // The only console error is the browser noting the 400 of the refused target (no CSP or script errors).
    expect(consoleErrors.filter((m) => !m.includes("status of 400"))).toEqual([]);

    await page.click("#logout-btn");
    expect(new URL(page.url()).pathname).toBe("/login");
    expect((await page.request.get(`${server.url}/api/status`)).status()).toBe(401);
    await page.close();
  }, 60_000);
});
