/**
 * The check every page gets in the browser tests: a full-page screenshot
 * (e2e/screenshots/<name>.png, the pictures of docs/console.md) and an axe-core
 * scan that fails on any serious or critical violation, naming the rule and
 * the first elements it found.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

export async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `e2e/screenshots/${name}.png`, fullPage: true });
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(
    bad.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 3)
          .join(", ")}`,
    ),
    `${name}: axe`,
  ).toEqual([]);
}
