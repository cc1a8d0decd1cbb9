/**
 * Benchmark workers in their own processes (the load generator never shares
 * a CPU budget or heap with what it measures). Each runs TypeScript through
 * tsx, with the soft fd limit raised to the hard one (10,000 sockets need
 * more than the usual 1,024), and talks over Node's IPC channel.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** Path of a worker script in ./workers. */
export function workerPath(name: string, ext: "ts" | "mjs" = "ts"): string {
  return fileURLToPath(new URL(`./workers/${name}.${ext}`, import.meta.url));
}

export interface Worker {
  readonly pid: number;
  readonly process: ChildProcess;
  /** The worker's first message (it sends one when ready, e.g. with its port). */
  readonly ready: Promise<Record<string, unknown>>;
  call<R = Record<string, unknown>>(cmd: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<R>;
  /** Lines the worker wrote to stderr (for error messages). */
  stderr(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Arguments after the script. */
  args?: string[];
  /** Extra node flags, e.g. --expose-gc. */
  nodeFlags?: string[];
  /** false: plain node without tsx's loader (for a .mjs script, e.g. the bare-node baseline of the bundled agent). */
  loader?: boolean;
  /** Ready message time-out. */
  readyTimeoutMs?: number;
  /**
   * Runs the worker under this command, e.g. `ip netns exec NS` for a worker
   * inside a lab namespace (it must exec in place, so the pid and the IPC
   * channel stay the worker's).
   */
  prefix?: string[];
}

/** Starts `script` (a .ts file; .mjs with `loader: false`) in a child node process with IPC. */
export function spawnWorker(script: string, options: SpawnOptions = {}): Worker {
  const argv = [
    ...(options.prefix ?? []),
    process.execPath,
    ...(options.nodeFlags ?? []),
    ...(options.loader === false ? [] : ["--import", tsxLoader]),
    script,
    ...(options.args ?? []),
  ];
  // sh raises the soft fd limit, then execs node (same pid, IPC fd inherited).
  const child = spawn("sh", ["-c", 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', "sh", ...argv], {
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  let err = "";
  child.stderr?.on("data", (b: Buffer) => {
    err = (err + b.toString()).slice(-8000);
  });
  let seq = 0;
  const pending = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let exited: string | null = null;
  const failAll = (why: string) => {
    exited = why;
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(`${script}: ${why}\n${err.trim()}`));
    }
    pending.clear();
  };
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script}: not ready within ${options.readyTimeoutMs ?? 30_000} ms\n${err}`)),
      options.readyTimeoutMs ?? 30_000,
    );
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve(m as Record<string, unknown>);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script}: exited (${code ?? signal}) before ready\n${err.trim()}`));
    });
  });
  ready.catch(() => {});
  child.on("message", (m: { id?: number; ok?: boolean; result?: unknown; error?: string }) => {
    if (typeof m.id !== "number") return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result as never);
    else p.reject(new Error(`${script}: ${m.error}`));
  });
  child.on("exit", (code, signal) => failAll(`exited (${code ?? signal})`));
  return {
    get pid() {
      return child.pid!;
    },
    process: child,
    ready,
    stderr: () => err,
    call<R>(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 600_000): Promise<R> {
      if (exited) return Promise.reject(new Error(`${script}: ${exited}`));
      const id = ++seq;
      return new Promise<R>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${script}: ${cmd} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: resolve as (v: never) => void, reject, timer });
        child.send({ id, cmd, ...args });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await gone;
      clearTimeout(timer);
    },
  };
}
