/** The lab's processes, kept in its state file: started, found again by key, stopped. */
import { readFile, stat } from "node:fs/promises";
import type { StateStore } from "./state.ts";
import { isAlive, type ProcessRecord, type ProcessSpec, startProcess, stopProcess } from "./supervisor.ts";

export class ProcessTable {
  constructor(
    private readonly store: StateStore,
    /** The value of TERN_LAB_INSTANCE for this lab. */
    readonly marker: string,
  ) {}

  get(key: string): ProcessRecord | undefined {
    return this.store.state.processes.find((p) => p.key === key);
  }

  async alive(key: string): Promise<boolean> {
    const rec = this.get(key);
    return rec ? isAlive(rec) : false;
  }

  /** Starts the process unless a live one is recorded under the same key; records it. */
  async ensure(spec: ProcessSpec): Promise<{ rec: ProcessRecord; started: boolean }> {
    const old = this.get(spec.key);
    if (old && (await isAlive(old))) return { rec: old, started: false };
    const rec = await startProcess(spec, this.marker);
    await this.store.update((s) => {
      s.processes = [...s.processes.filter((p) => p.key !== spec.key), rec];
    });
    return { rec, started: true };
  }

  async stop(key: string, graceMs?: number): Promise<void> {
    const rec = this.get(key);
    if (!rec) return;
    await stopProcess(rec, graceMs);
    await this.store.update((s) => {
      s.processes = s.processes.filter((p) => p.key !== key);
    });
  }
}

/** Current size of a log file (0 when missing): the offset to wait for new lines from. */
export async function logSize(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.size,
    () => 0,
  );
}

/** Waits until `pattern` appears in the log after `fromOffset`; throws with the log's tail on timeout. */
export async function waitForLog(path: string, fromOffset: number, pattern: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = (await readFile(path, "utf8").catch(() => "")).slice(fromOffset);
    if (pattern.test(text)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${pattern} in ${path}:\n${text.trim().split("\n").slice(-5).join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
