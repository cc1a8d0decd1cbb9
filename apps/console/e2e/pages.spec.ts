/**
 * The console's tunnels, jobs, notifications, organization, branding and
 * account pages in a real browser against the shared stack (support/stack.ts).
 * Two routers of this file's own (simulated in the test process, enrolled with
 * a registration token and approved through the API like any other) carry the
 * tunnel the test creates in the page, so that this file can change their
 * figures: loss raised on them raises the notification that must appear live.
 */
import { expect, type Page, test } from "@playwright/test";
import { ok } from "@tern/client";
import { signIn } from "./support/fixtures.ts";
import { checkPage } from "./support/page-check.ts";
import { specFleet } from "./support/spec-fleet.ts";
import { stackInfo } from "./support/stack-info.ts";

// Indexes past the stack's routers (0…).
const spec = specFleet({
  name: "e2e pages routers",
  count: 2,
  startIndex: 1000,
  machinePrefix: "pages",
});
test.describe.configure({ mode: "serial" });

async function choose(page: Page, label: string, option: string | RegExp) {
  await page.getByRole("combobox", { name: label, exact: true }).click();
  await page.getByRole("option", { name: option }).first().click();
}

test("creates a tunnel between two simulated routers and sees it listed, then Connected live", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Tunnels" }).click();
  await expect(page.getByRole("heading", { name: "Tunnels", level: 1 })).toBeVisible();
  const [a, b] = spec.routers;
  await choose(page, "Device A", a!.name);
  await choose(page, "WAN interface A", /./);
  await choose(page, "Device B", b!.name);
  await choose(page, "WAN interface B", /./);
  await page.getByRole("button", { name: "Create tunnel" }).click();
  const row = page.getByTestId("tunnel-row").filter({ hasText: a!.name }).filter({ hasText: b!.name });
  await expect(row).toHaveCount(1);
  // The routers apply the tunnel and report it up: the list turns Connected without a reload.
  await expect(row.getByText("Connected", { exact: true })).toBeVisible({ timeout: 30_000 });
  // The figures of both ends arrive (polled every 10 s).
  await expect(row.getByRole("cell").nth(4)).not.toHaveText("–", { timeout: 25_000 });
  await row.getByRole("link").click();
  await expect(page.getByRole("heading", { name: /Tunnel #\d+/ })).toBeVisible();
  await expect(page.getByRole("img", { name: /^RTT: latest/ })).toBeVisible({ timeout: 20_000 });
});

test("a notification raised by the routers appears live and is acknowledged", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Notifications" }).click();
  await expect(page.getByTestId("live-status")).toHaveText("Live");
  const dropRate = page.getByTestId("notification-row").filter({ hasText: /drop rate/ });
  await expect(dropRate).toHaveCount(0);
  spec.fleet.setTunnelMetrics({ up: true, loss: 60, rtt: 20, jitter: 1 });
  await expect(dropRate.first()).toBeVisible({ timeout: 20_000 });
  const id = await dropRate.first().getAttribute("data-notification-id");
  expect(id).toBeTruthy();
  const row = page.locator(`[data-notification-id="${id}"]`);
  await row.getByRole("button", { name: /^Acknowledge/ }).click();
  // Acknowledged: read and resolved, so it leaves the open inbox.
  await expect(row).toHaveCount(0);
  spec.fleet.setTunnelMetrics({ up: true, loss: 0, rtt: 20, jitter: 1 });
  const [stored] = await ok(
    spec.api.api.GET("/api/notifications", { params: { query: { filter: JSON.stringify([{ key: "id", op: "==", val: id }]) } } }),
  );
  expect(stored).toMatchObject({ resolved: true, status: "read" });
  await page.getByRole("combobox", { name: "Resolution", exact: true }).click();
  await page.getByRole("option", { name: "Resolved" }).click();
  await expect(row).toContainText("resolved");
});

test("the overview's mesh graph follows a tunnel's status live", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await expect(page.getByTestId("live-status")).toHaveText("Live");
  const [a, b] = spec.routers;
  const edge = page
    .getByTestId("mesh-edge")
    .filter({ has: page.locator("line") })
    .and(page.getByRole("link", { name: new RegExp(`^Tunnel #\\d+ ${a!.name} – ${b!.name}:`) }));
  await expect(edge).toHaveAttribute("data-status", "Connected", { timeout: 20_000 });
  const navigations: string[] = [];
  page.on("framenavigated", (f) => f === page.mainFrame() && navigations.push(f.url()));
  // The routers report the tunnel down: the edge turns Not Connected without a reload.
  spec.fleet.setTunnelMetrics({ up: false, loss: 100, rtt: 0, jitter: 0 });
  await expect(edge).toHaveAttribute("data-status", "Not Connected", { timeout: 20_000 });
  expect(navigations).toEqual([]);
  // Up again for the tests after this one. (Not asserted live in the graph: the server publishes the tunnel event before
  // the report is stored, so the refetch it causes can still read "down"; the tunnels pages poll their figures anyway.)
  spec.fleet.setTunnelMetrics({ up: true, loss: 0, rtt: 20, jitter: 1 });
  const id = (await edge.getAttribute("data-tunnel-id")) ?? "";
  await expect
    .poll(async () => (await ok(spec.api.api.GET("/api/tunnels/{id}", { params: { path: { id } } }))).status, { timeout: 20_000 })
    .toBe("Connected");
});

test("an access token's secret is shown once, never again", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/organization?tab=accesstokens`);
  await page.getByLabel("Name").fill("e2e script");
  await page.getByRole("button", { name: "Create token" }).click();
  const secret = (await page.getByTestId("secret-value").textContent())?.trim() ?? "";
  expect(secret.length).toBeGreaterThan(20);
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByRole("cell", { name: "e2e script" })).toBeVisible();
  await page.reload();
  await expect(page.getByRole("cell", { name: "e2e script" })).toBeVisible();
  expect(await page.content()).not.toContain(secret);
});

test("a registration token comes with the enrol command to copy", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/organization?tab=tokens`);
  await page.getByLabel("Name").fill("e2e branch office");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByTestId("secret-value")).toContainText(`tern-agent enroll --server ${s.consoleUrl} --token `);
  await expect(page.getByRole("button", { name: "Copy the command" })).toBeVisible();
});

test("an uploaded logo shows on the sign-in page", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Branding" }).click();
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><circle cx="32" cy="32" r="28" fill="#e8590c"/><script>alert(1)</script></svg>`;
  await page
    .locator('input[type="file"]')
    .setInputFiles({ name: "logo.svg", mimeType: "image/svg+xml", buffer: Buffer.from(svg) });
  await expect(page.getByRole("status")).toHaveText("Logo uploaded");
  await expect(page.getByRole("img", { name: "Current logo" })).toHaveAttribute("src", /\/api\/branding\/logo/);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("heading", { name: /Sign in to/ })).toBeVisible();
  const logo = page.locator('img[src*="/api/branding/logo"]');
  await expect(logo).toBeVisible();
  expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  // The server sanitized it: the script is gone.
  const served = await page.request.get(`${s.consoleUrl}${await logo.getAttribute("src")}`);
  expect(await served.text()).not.toContain("script");
});

test("a viewer sees none of these pages' write controls", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.viewer);
  const writes = /Create|Delete|Acknowledge|Mark|Resolve all|Invite|Revoke|Upload|Save|Send a test/;
  for (const path of [
    "/tunnels",
    "/peers",
    "/jobs",
    "/notifications",
    "/notifications?tab=configuration",
    "/organization",
    "/branding",
  ]) {
    await page.goto(`${s.consoleUrl}${path}`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await page.waitForLoadState("networkidle", { timeout: 3_000 }).catch(() => {});
    await expect(page.getByRole("button", { name: writes }), path).toHaveCount(0);
  }
  await page.goto(`${s.consoleUrl}/tunnels`);
  await page.getByTestId("tunnel-row").first().getByRole("link").click();
  await expect(page.getByRole("heading", { name: /Tunnel #\d+/ })).toBeVisible();
  await expect(page.getByRole("button", { name: writes })).toHaveCount(0);
});

const PAGES: { name: string; path: string; ready: (page: Page) => Promise<void> }[] = [
  { name: "tunnels", path: "/tunnels", ready: (p) => expect(p.getByTestId("tunnel-row").first()).toBeVisible() },
  { name: "tunnel", path: "", ready: (p) => expect(p.getByRole("heading", { name: "Loss, RTT and jitter" })).toBeVisible() },
  { name: "peers", path: "/peers", ready: (p) => expect(p.getByRole("heading", { name: "No peers yet" })).toBeVisible() },
  { name: "jobs", path: "/jobs", ready: (p) => expect(p.getByTestId("job-row").first()).toBeVisible() },
  {
    name: "notifications",
    path: "/notifications",
    ready: (p) => expect(p.getByRole("combobox", { name: "Resolution" })).toBeVisible(),
  },
  {
    name: "notifications-configuration",
    path: "/notifications?tab=configuration",
    ready: (p) => expect(p.getByRole("table", { name: "Notification rules" })).toBeVisible(),
  },
  {
    name: "organization-members",
    path: "/organization?tab=members",
    ready: (p) => expect(p.getByRole("table", { name: "Members" })).toBeVisible(),
  },
  {
    name: "organization-accesstokens",
    path: "/organization?tab=accesstokens",
    ready: (p) => expect(p.getByRole("heading", { name: "Create an access token" })).toBeVisible(),
  },
  {
    name: "organization-tokens",
    path: "/organization?tab=tokens",
    ready: (p) => expect(p.getByRole("table", { name: "Registration tokens" })).toBeVisible(),
  },
  {
    name: "organization-audit",
    path: "/organization?tab=audit",
    ready: (p) => expect(p.getByRole("table", { name: "Audit log" })).toBeVisible(),
  },
  {
    name: "organization-settings",
    path: "/organization?tab=settings",
    ready: (p) => expect(p.getByLabel("Tunnel range")).toBeVisible(),
  },
  {
    name: "branding",
    path: "/branding",
    ready: (p) => expect(p.getByRole("heading", { name: "Name and colour" })).toBeVisible(),
  },
  { name: "account", path: "/account", ready: (p) => expect(p.getByRole("table", { name: "Sessions" })).toBeVisible() },
];

for (const scheme of ["light", "dark"] as const) {
  test(`the new pages pass axe (no serious or critical violations) in the ${scheme} theme, with screenshots`, async ({
    page,
  }) => {
    // Many pages, each scanned by axe: more than one test's usual minute on a busy machine.
    test.setTimeout(180_000);
    const s = stackInfo();
    await page.emulateMedia({ colorScheme: scheme });
    await signIn(page, s.admin);
    const [tunnel] = await ok(spec.api.api.GET("/api/tunnels", { params: { query: { response: "summary" } } }));
    for (const p of PAGES) {
      await page.goto(`${s.consoleUrl}${p.path || `/tunnels/${tunnel!.id}`}`);
      await p.ready(page);
      await page.waitForLoadState("networkidle", { timeout: 3_000 }).catch(() => {});
      await checkPage(page, `${p.name}-${scheme}`);
    }
  });
}
