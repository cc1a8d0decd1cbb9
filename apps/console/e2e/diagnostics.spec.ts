/**
 * The device page's Diagnostics panel in a real browser: a ping run on a
 * (simulated) router through the streamed API, its output shown, and the
 * panel's screenshot in both themes with an axe scan. The simulator answers
 * like an agent before streamed diagnostics (its whole output at the end);
 * line-by-line streaming is tested at the API and agent levels.
 */
import { expect, test } from "@playwright/test";
import { signIn } from "./support/fixtures.ts";
import { checkBothThemes } from "./support/page-check.ts";
import { specFleet } from "./support/spec-fleet.ts";
import { stackInfo } from "./support/stack-info.ts";

// Indexes past the stack's and the other specs' routers.
const spec = specFleet({
  name: "e2e diagnostics router",
  count: 1,
  startIndex: 1400,
  machinePrefix: "diag",
});
test.describe.configure({ mode: "serial" });

test("a ping run from the device page shows the router's output and ends done", async ({ page }) => {
  const s = stackInfo();
  const router = spec.routers[0]!;
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/devices/${router.id}`);
  const panel = page.getByRole("region", { name: "Diagnostics" });
  await expect(panel).toBeVisible();
  await panel.getByLabel("Target").fill("192.0.2.1");
  await panel.getByRole("button", { name: "Run" }).click();
  await expect(panel.getByTestId("diagnostic-output")).toContainText("4 packets transmitted");
  await expect(panel.getByText("done", { exact: true })).toBeVisible();
  await panel.scrollIntoViewIfNeeded();
  await checkBothThemes(page, "device-diagnostics");
});
