/**
 * The console in a real browser against a real server with 20 simulated
 * routers (support/stack.ts). The tests run in order on one stack: the
 * approvals change what later tests see.
 */
import { expect, type Page, test } from "@playwright/test";
import { hasChromium, missingChromium } from "./support/browser.ts";
import { diagnoseFailures } from "./support/diagnose.ts";
import { forgeWrite, signIn } from "./support/fixtures.ts";
import { checkPage } from "./support/page-check.ts";
import { stackInfo } from "./support/stack-info.ts";

diagnoseFailures();

test.skip(!hasChromium, missingChromium);

const deviceRow = (page: Page, name: string) =>
  page.getByTestId("device-row").filter({ has: page.getByRole("link", { name, exact: true }) });

test("signs in with the cookie session and shows the fleet overview", async ({ page }) => {
  const s = stackInfo();
  await page.goto(`${s.consoleUrl}/devices`);
  // Not signed in: the sign-in page, coming back to the page asked for afterwards.
  await expect(page).toHaveURL(/\/signin\?next=%2Fdevices/);
  await page.getByLabel("E-mail").fill(s.admin.email);
  await page.getByRole("textbox", { name: "Password", exact: true }).fill("wrong password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert")).toContainText("UNAUTHENTICATED");
  await page.getByRole("textbox", { name: "Password", exact: true }).fill(s.admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Devices" })).toBeVisible();
  // The session is an HttpOnly cookie: nothing of it in the page's storage.
  const cookies = await page.context().cookies();
  expect(cookies.find((c) => c.name === "tern_console")?.httpOnly).toBe(true);
  expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(
    cookies.find((c) => c.name === "tern_console")?.value ?? "-",
  );
  await page.getByRole("link", { name: "Overview" }).click();
  await expect(page.getByTestId("figure-online")).toHaveText(String(s.devices - s.pending.length));
  await expect(page.getByTestId("figure-pending")).toHaveText(String(s.pending.length));
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("heading", { name: /Sign in to/ })).toBeVisible();
  await page.goto(`${s.consoleUrl}/`);
  await expect(page).toHaveURL(/\/signin/);
});

test("lists the 20 simulated devices, searches, filters and sorts them", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page.getByText(`${s.devices} of ${s.devices} devices`)).toBeVisible();
  await expect(page.getByTestId("device-row")).toHaveCount(s.devices);
  await page.locator('label[for$="-pending"]').click();
  await expect(page.getByText(`${s.pending.length} of ${s.devices} devices`)).toBeVisible();
  for (const p of s.pending) await expect(deviceRow(page, p.name)).toContainText("pending");
  await page.locator('label[for$="-all"]').click();
  await page.getByLabel("Search").fill(s.pending[0]!.name);
  await expect(page.getByTestId("device-row")).toHaveCount(1);
  await page.getByLabel("Search").fill("");
  await page.getByRole("button", { name: /^Name/ }).click();
  await expect(page.getByRole("columnheader", { name: /Name/ })).toHaveAttribute("aria-sort", "descending");
});

test("approves a pending device and sees it come online without reload", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Devices" }).click();
  const [first] = s.pending;
  const row = deviceRow(page, first!.name);
  await expect(row).toContainText("pending");
  const navigations: string[] = [];
  page.on("framenavigated", (f) => f === page.mainFrame() && navigations.push(f.url()));
  await row.getByRole("button", { name: `Approve ${first!.name}` }).click();
  await expect(row).toContainText("online");
  await expect(row.getByRole("button", { name: /Approve/ })).toHaveCount(0);
  expect(navigations).toEqual([]);
});

test("a change made elsewhere appears live (server-sent events)", async ({ page, request }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page.getByTestId("live-status")).toHaveText("Live");
  const second = s.pending[1]!;
  await expect(deviceRow(page, second.name)).toContainText("pending");
  // Another administrator approves it through the API.
  const login = await request.post(`${s.apiUrl}/api/users/login`, {
    data: { username: s.admin.email, password: s.admin.password },
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  const approved = await request.put(`${s.apiUrl}/api/devices/${second.id}?org=${s.orgId}`, {
    headers: { authorization: `Bearer ${accessToken}` },
    data: { isApproved: true },
  });
  expect(approved.ok()).toBe(true);
  await expect(deviceRow(page, second.name)).toContainText("online");
});

test("approves pending devices in bulk", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Devices" }).click();
  const chosen = [s.pending[2]!, s.pending[3]!];
  for (const d of chosen)
    await deviceRow(page, d.name)
      .getByRole("checkbox", { name: `Select ${d.name}` })
      .check();
  await page.getByRole("button", { name: "Approve selected (2)" }).click();
  for (const d of chosen) await expect(deviceRow(page, d.name)).toContainText("online");
  // The one not selected is still pending.
  await expect(deviceRow(page, s.pending[4]!.name)).toContainText("pending");
});

test("a row's Delete asks about that device in the table's one dialog, and Cancel keeps it", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Devices" }).click();
  const [first, second] = [s.pending[4]!, s.pending[0]!];
  for (const d of [first, second]) {
    await deviceRow(page, d.name)
      .getByRole("button", { name: `Delete ${d.name}` })
      .click();
    const dialog = page.getByRole("dialog", { name: "Delete" });
    await expect(dialog).toContainText(`Delete ${d.name}?`);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toHaveCount(0);
  }
  await expect(page.getByTestId("device-row")).toHaveCount(s.devices);
});

test("a viewer sees no write controls, and a forged write is refused", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.viewer);
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page.getByTestId("device-row")).toHaveCount(s.devices);
  await expect(page.getByRole("button", { name: /Approve|Delete/ })).toHaveCount(0);
  await page.getByTestId("device-row").first().getByRole("link").click();
  await expect(page.getByRole("heading", { name: "Interfaces" })).toBeVisible();
  await expect(page.getByRole("button", { name: /Approve|Delete/ })).toHaveCount(0);
  const target = `/api/devices/${s.pending[0]!.id}?org=${s.orgId}`;
  // With the session's CSRF token the server still refuses: the role cannot write devices.
  expect(await forgeWrite(page, target, { description: "forged" }, true)).toEqual({ status: 403, code: "FORBIDDEN" });
  // Without it, the cookie alone is not enough for a write.
  expect(await forgeWrite(page, target, { description: "forged" }, false)).toEqual({ status: 403, code: "CSRF_FAILED" });
});

test("works from the keyboard: skip link, navigation, opening a device", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator("#main")).toBeFocused();
  // Navigation links and device links are focusable and open their pages with Enter.
  await page.getByRole("link", { name: "Devices" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Devices" })).toBeVisible();
  const first = page.getByTestId("device-row").first().getByRole("link");
  await first.focus();
  const name = await first.textContent();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { level: 1, name: name ?? "" })).toBeVisible();
});

test("the overview draws the tunnel mesh: every device by state, the tunnel with its status and figures", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  const graph = page.getByTestId("mesh-graph");
  await expect(graph).toHaveAttribute("data-settled", "true");
  await expect(graph.getByTestId("mesh-node")).toHaveCount(s.devices);
  // A device never approved is drawn as pending; as many nodes are online and pending as the figures above say.
  await expect(graph.getByRole("link", { name: `Device ${s.pending[4]!.name}: pending`, exact: true })).toBeVisible();
  for (const state of ["online", "pending"])
    await expect(graph.locator(`[data-testid="mesh-node"][data-state="${state}"]`)).toHaveCount(
      Number(await page.getByTestId(`figure-${state}`).textContent()),
    );
  const edge = graph.getByTestId("mesh-edge");
  await expect(edge).toHaveCount(1);
  await expect(edge).toHaveAttribute("data-status", "Connected", { timeout: 20_000 });
  await expect(edge).toHaveAccessibleName(/^Tunnel #\d+ .+ – .+: Connected$/);
  // Pointing at the tunnel shows its figures (the simulated routers report RTT 20 ms); a click opens its page.
  await edge.hover();
  const details = page.getByTestId("mesh-details");
  await expect(details.getByTestId("mesh-details-status")).toHaveText("Connected");
  await expect(details).toContainText(/RTT 20\.0 ms/, { timeout: 15_000 });
  await edge.click();
  await expect(page).toHaveURL(/\/tunnels\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { name: /^Tunnel #\d+/ })).toBeVisible();
});

const PAGES: { name: string; path: (s: ReturnType<typeof stackInfo>) => string; ready: (page: Page) => Promise<void> }[] = [
  {
    name: "overview",
    path: () => "/",
    ready: async (p) => {
      await expect(p.getByTestId("figure-online")).toBeVisible();
      await expect(p.getByTestId("mesh-graph")).toHaveAttribute("data-settled", "true");
    },
  },
  { name: "devices", path: () => "/devices", ready: (p) => expect(p.getByTestId("device-row").first()).toBeVisible() },
  // A device with a tunnel: its loss/RTT/jitter charts (uPlot canvases) are part of the page.
  {
    name: "device",
    path: (s) => `/devices/${s.tunnelDevice}`,
    ready: async (p) => {
      await expect(p.getByRole("heading", { name: "Recent jobs" })).toBeVisible();
      await expect(p.getByRole("img", { name: /^RTT: latest/ })).toBeVisible({ timeout: 20_000 });
    },
  },
  {
    name: "device-pending",
    path: (s) => `/devices/${s.pending[4]!.id}`,
    ready: (p) => expect(p.getByRole("heading", { name: "Interfaces" })).toBeVisible(),
  },
];

for (const scheme of ["light", "dark"] as const) {
  test(`every page passes axe (no serious or critical violations) in the ${scheme} theme, with screenshots`, async ({ page }) => {
    // Many pages, each scanned by axe: more than one test's usual minute on a busy machine.
    test.setTimeout(180_000);
    const s = stackInfo();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${s.consoleUrl}/signin`);
    await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
    await checkPage(page, `signin-${scheme}`);
    await signIn(page, s.admin);
    for (const p of PAGES) {
      await page.goto(`${s.consoleUrl}${p.path(s)}`);
      await p.ready(page);
      await page.waitForLoadState("networkidle").catch(() => {});
      await checkPage(page, `${p.name}-${scheme}`);
    }
  });
}
