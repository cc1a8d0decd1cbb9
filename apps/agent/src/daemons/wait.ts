/** Polling with a deadline, for daemons that signal readiness only by a file, socket or state. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `check` every `intervalMs` until it returns true; returns false when
 * `timeoutMs` passes first. A check that throws counts as false.
 */
export async function pollUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}
