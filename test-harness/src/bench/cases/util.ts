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

/** Median wall time (ms) of `runs` runs of argv one after the other, from spawn to exit; throws on a failed run. */
export async function timeCommand(argv: string[], runs: number): Promise<number> {
  const { spawn } = await import("node:child_process");
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { stdio: "ignore" });
      child.once("error", reject);
      child.once("exit", (c) => resolve(c));
    });
    if (code !== 0) throw new Error(`${argv.join(" ")} exited with ${code}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
