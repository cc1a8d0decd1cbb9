/**
 * Device tags and actions in the console (issue 19), with one router of this
 * file's own (simulator index 3000): tags edited on the device page appear as
 * badges and in the devices list's tag filter; the actions menu starts a job
 * (the simulated router does not carry actions out, so the job ends failed:
 * the page only has to start it) and links to it on the jobs page; reset
 * asks for confirmation and Cancel sends nothing; a viewer sees neither the
 * tag editor nor the actions.
 */
import { expect, test } from "@playwright/test";
import { createTernClient, ok, type TernClient } from "@tern/client";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { hasChromium, missingChromium } from "./support/browser.ts";
import { diagnoseFailures } from "./support/diagnose.ts";
import { signIn } from "./support/fixtures.ts";
import { checkBothThemes } from "./support/page-check.ts";
import { enrolRouters } from "./support/routers.ts";
import { stackInfo } from "./support/stack-info.ts";

diagnoseFailures();

test.skip(!hasChromium, missingChromium);
test.describe.configure({ mode: "serial" });

let api: TernClient;
let fleet: Simulator;
let router: { id: string; name: string };
const tag = `e2e-${Date.now().toString(36)}`;

test.beforeAll(async () => {
  if (!hasChromium) return;
  const s = stackInfo();
  api = createTernClient({ baseUrl: s.apiUrl, org: s.orgId });
  await api.login(s.admin.email, s.admin.password);
  // Past the stack's routers (0…), the pages spec's (1000…) and the forms spec's (2000…).
  const enrolled = await enrolRouters(api, { name: "e2e actions router", count: 1, startIndex: 3000, machinePrefix: "actions" });
  fleet = enrolled.fleet;
  router = enrolled.routers[0]!;
});

test.afterAll(async () => {
  await fleet?.stop().catch(() => {});
  if (router) await ok(api.api.DELETE("/api/devices/{id}", { params: { path: { id: router.id } } })).catch(() => {});
});

test("tags are edited on the device page and filter the devices list", async ({ page }) => {
  await signIn(page, stackInfo().admin);
  await page.goto(`${stackInfo().consoleUrl}/devices/${router.id}`);
  await expect(page.getByRole("heading", { level: 1, name: router.name })).toBeVisible();
  await expect(page.getByText("No tags")).toBeVisible();
  await page.getByRole("button", { name: "Edit tags" }).click();
  const input = page.getByRole("combobox", { name: "Tags", exact: true });
  await input.fill(tag);
  await input.press("Enter");
  await input.fill("site:e2e");
  await input.press("Enter");
  await page.getByRole("button", { name: "Save tags" }).click();
  const tags = page.getByRole("group", { name: "Tags" });
  await expect(tags.getByText(tag)).toBeVisible();
  await expect(tags.getByText("site:e2e")).toBeVisible();
  const stored = await ok(api.api.GET("/api/devices/{id}", { params: { path: { id: router.id } } }));
  expect(stored.tags).toEqual([tag, "site:e2e"]);

  await page.goto(`${stackInfo().consoleUrl}/devices`);
  await page.getByRole("combobox", { name: "Tag", exact: true }).click();
  await page.getByRole("option", { name: tag }).click();
  const table = page.getByRole("table", { name: "Devices" });
  await expect(table.getByRole("row")).toHaveCount(2);
  await expect(table.getByRole("link", { name: router.name })).toBeVisible();
  await expect(page.getByText(/^1 of \d+ devices$/)).toBeVisible();
});

test("the actions menu starts a job; reset asks first and Cancel sends nothing", async ({ page }) => {
  await signIn(page, stackInfo().admin);
  await page.goto(`${stackInfo().consoleUrl}/devices/${router.id}`);
  await expect(page.getByRole("button", { name: "Actions" })).toBeVisible();
  await checkBothThemes(page, "device-tags-actions");
  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("menuitem", { name: "Restart agent" }).click();
  await expect(page.getByRole("status").filter({ hasText: "restart-agent started" })).toBeVisible();
  const jobs = await ok(
    api.api.GET("/api/jobs", {
      params: { query: { filter: JSON.stringify([{ key: "device.id", op: "==", val: router.id }]) } },
    }),
  );
  expect(jobs.map((j) => j.type)).toContain("restart-agent");

  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("menuitem", { name: "Reset router…" }).click();
  const dialog = page.getByRole("dialog", { name: "Reset router" });
  await expect(dialog).toContainText(`Reset ${router.name}?`);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  const after = await ok(
    api.api.GET("/api/jobs", {
      params: { query: { filter: JSON.stringify([{ key: "device.id", op: "==", val: router.id }]) } },
    }),
  );
  expect(after.map((j) => j.type)).not.toContain("reset");
  expect((await ok(api.api.GET("/api/devices/{id}", { params: { path: { id: router.id } } }))).isApproved).toBe(true);

  // The status links to the job it started: the jobs page opens on that job alone.
  await page.getByRole("status").filter({ hasText: "restart-agent started" }).getByRole("link", { name: "see its job" }).click();
  await expect(page).toHaveURL(/\/jobs\?ids=/);
  await expect(page.getByTestId("job-scope")).toContainText("The jobs just started");
  await expect(page.getByTestId("job-row")).toHaveCount(1);
  await expect(page.getByTestId("job-row")).toContainText("restart-agent");
  await expect(page.getByRole("button", { name: /^Delete (matching|all) jobs$/ })).toHaveCount(0);
  await page.getByRole("link", { name: "Show every job" }).click();
  await expect(page.getByTestId("job-scope")).toHaveCount(0);
});

test("a viewer sees the tags but neither the tag editor nor the actions", async ({ page }) => {
  await signIn(page, stackInfo().viewer);
  await page.goto(`${stackInfo().consoleUrl}/devices/${router.id}`);
  await expect(page.getByRole("group", { name: "Tags" }).getByText(tag)).toBeVisible();
  await expect(page.getByRole("button", { name: "Edit tags" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Actions" })).toHaveCount(0);
});
