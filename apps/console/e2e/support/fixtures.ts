/** Helpers of the console's browser tests: signing in through the page, as a user would. */
import { expect, type Page } from "@playwright/test";
import { stackInfo } from "./stack-info.ts";

export async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${stackInfo().consoleUrl}/signin`);
  await page.getByLabel("E-mail").fill(who.email);
  await page.getByRole("textbox", { name: "Password", exact: true }).fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Fleet overview" })).toBeVisible();
}

/** A write as a script on the page could forge it: the page's cookie, with or without the session's CSRF token. */
export async function forgeWrite(
  page: Page,
  path: string,
  body: unknown,
  withCsrf: boolean,
): Promise<{ status: number; code: string | null }> {
  return page.evaluate(
    async ({ path, body, withCsrf }) => {
      const session = (await (await fetch("/api/console/session")).json()) as { csrfToken: string };
      const response = await fetch(path, {
        method: "PUT",
        headers: { "content-type": "application/json", ...(withCsrf ? { "X-CSRF-Token": session.csrfToken } : {}) },
        body: JSON.stringify(body),
      });
      const answer = (await response.json().catch(() => ({}))) as { code?: string };
      return { status: response.status, code: answer.code ?? null };
    },
    { path, body, withCsrf },
  );
}
