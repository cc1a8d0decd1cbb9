/**
 * The device page's history (statistics history, issue 19): a simulated
 * router of this file's own reports its counters and health with each
 * status; once the server has raw rows, the page charts its traffic and
 * CPU/memory from GET /api/devices/{id}/statistics.
 */
import { expect, test } from "@playwright/test";
import { ok } from "@tern/client";
import { signIn } from "./support/fixtures.ts";
import { checkPage } from "./support/page-check.ts";
import { specFleet } from "./support/spec-fleet.ts";
import { stackInfo } from "./support/stack-info.ts";

const spec = specFleet({
  name: "e2e history router",
  count: 1,
  startIndex: 3000,
  machinePrefix: "history",
});

test("the device page charts the router's traffic and health history", async ({ page }) => {
  const s = stackInfo();
  const router = spec.routers[0]!;
  // Two raw intervals of statuses give the first points.
  await expect
    .poll(
      async () => {
        const stats = await ok(
          spec.api.api.GET("/api/devices/{id}/statistics", { params: { path: { id: router.id }, query: {} } }),
        );
        return stats.interfaces.reduce((n, i) => n + i.points.length, 0) > 0 && stats.health.length > 0;
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/devices/${router.id}`);
  const history = page.getByRole("region", { name: "History" });
  await expect(history.getByRole("img", { name: /^Traffic: latest eth0 in \d.* kbit\/s/ })).toBeVisible();
  await expect(history.getByRole("img", { name: /^CPU and memory: latest CPU \d/ })).toBeVisible();
  await expect(history.getByText(/s per point \(raw tier\)/)).toBeVisible();
  await history.getByText("24 h", { exact: true }).click();
  // A day at most 500 points: 5-minute steps from the 1-minute roll-ups (the minutes not yet rolled up from raw rows).
  await expect(history.getByText("300 s per point (1m tier)")).toBeVisible();
  await checkPage(page, "device-history");
});
