/**
 * What a failed browser test prints about the system behind the page, so that
 * a failure seen once in CI can be read without running it again: every
 * device's connection, every tunnel's status and figures, the latest
 * notifications (resolved ones too), the server's warnings and errors (the
 * stack logs them to a file: stack.ts), and what the page showed.
 */
import { readFile } from "node:fs/promises";
import { type Page, test } from "@playwright/test";
import { createTernClient, ok, type TernClient } from "@tern/client";
import type { DeviceSummary } from "@tern/protocol";
import { stackInfo } from "./stack-info.ts";

const LOG_LINES = 40;
const PAGE_CHARS = 4000;

export async function describeStack(api: TernClient | undefined, page: Page | undefined): Promise<string> {
  const parts: string[] = [];
  const section = async (title: string, read: () => Promise<string[]>) => {
    try {
      const lines = await read();
      parts.push(`${title}:`, ...(lines.length > 0 ? lines : ["(none)"]).map((l) => `  ${l}`));
    } catch (err) {
      parts.push(`${title}: not read (${err instanceof Error ? err.message : String(err)})`);
    }
  };
  if (api) {
    await section("devices", async () => {
      const devices = (await ok(
        api.api.GET("/api/devices", { params: { query: { response: "summary", sort: "name", limit: 100 } } }),
      )) as DeviceSummary[];
      return devices.map(
        (d) => `${d.name}: ${d.isApproved ? "approved" : "pending"}, ${d.isConnected ? "connected" : "not connected"}`,
      );
    });
    await section("tunnels", async () => {
      const tunnels = await ok(api.api.GET("/api/tunnels", { params: { query: { limit: 20 } } }));
      const lines: string[] = [];
      for (const { id } of tunnels) {
        const t = await ok(api.api.GET("/api/tunnels/{id}", { params: { path: { id } } }));
        const far = t.deviceB?.name ?? t.peer?.name ?? "?";
        lines.push(
          `#${t.num} ${t.deviceA.name} – ${far}: ${t.status} (a ${t.tunnelStatusA}, b ${t.tunnelStatusB}), ` +
            `figures ${JSON.stringify(t.quality)}`,
        );
      }
      return lines;
    });
    await section("notifications, newest first", async () => {
      const list = await ok(
        api.api.GET("/api/notifications", {
          params: { query: { limit: 30, sort: "createdAt", order: "desc" } },
        }),
      );
      return list.map(
        (n) =>
          `${n.createdAt} ${n.eventType} ${n.severity}${n.resolved ? " resolved" : ""} ×${n.count}: ${n.title} – ${n.details}`,
      );
    });
  }
  await section(`the server's last ${LOG_LINES} warnings and errors`, async () => {
    const file = stackInfo().serverLog;
    if (!file) return ["(the stack keeps no log)"];
    return (await readFile(file, "utf8")).trim().split("\n").filter(Boolean).slice(-LOG_LINES);
  });
  if (page && !page.isClosed()) {
    await section("the page", async () => {
      const live = await page
        .getByTestId("live-status")
        .textContent({ timeout: 1_000 })
        .catch(() => "not shown");
      const snapshot = await page.locator("main").ariaSnapshot({ timeout: 2_000 });
      return [`${page.url()}, live updates: ${live}`, ...snapshot.slice(0, PAGE_CHARS).split("\n")];
    });
  }
  return parts.join("\n");
}

/** After each test of the calling file that fails: prints describeStack (read as the stack's administrator) and attaches it. */
export function diagnoseFailures(): void {
  test.afterEach(async ({ page }, testInfo) => {
    if (testInfo.status === testInfo.expectedStatus) return;
    const s = stackInfo();
    // The administrator, only reading: forms.spec.ts turns two-factor sign-in on for the viewer for one test.
    const api = createTernClient({ baseUrl: s.apiUrl, org: s.orgId });
    const signedIn = await api.login(s.admin.email, s.admin.password).then(
      () => true,
      () => false,
    );
    const report = await describeStack(signedIn ? api : undefined, page);
    console.log(`--- the system behind the failed test "${testInfo.title}" ---\n${report}\n---`);
    await testInfo.attach("system.txt", { body: report, contentType: "text/plain" });
  });
}
