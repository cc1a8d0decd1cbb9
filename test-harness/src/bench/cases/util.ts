/** Helpers shared by the cases. */
import type { Worker } from "../child.ts";

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Stops workers in reverse start order, ignoring ones that are already gone. */
export async function stopAll(...workers: (Worker | undefined)[]): Promise<void> {
  for (const w of workers.reverse()) await w?.stop().catch(() => undefined);
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db` for logs and results. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<unparseable url>";
  }
}
