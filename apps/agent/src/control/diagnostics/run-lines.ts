/**
 * Runs a diagnostic command (ping, traceroute) and hands its output over line
 * by line as it comes, with a hard time limit and a stop from the caller
 * (the server cancelled: its caller went away). Stopping sends SIGINT first,
 * so ping still prints its statistics of the replies so far, then SIGKILL
 * after KILL_AFTER_MS. Argv arrays only (never a shell), LC_ALL=C like the Runner.
 */
import { spawn } from "node:child_process";

/** After SIGINT, a command that is still there gets SIGKILL this much later. */
const KILL_AFTER_MS = 2000;
/** Output kept for the final result; the lines still stream past it. */
export const MAX_OUTPUT_CHARS = 64 * 1024;

export interface LineRunOptions {
  onLine(line: string): void;
  /** Aborted: stop the command (its result says `stopped: "cancelled"`). */
  signal?: AbortSignal | undefined;
  /** Stop the command after this long (its result says `stopped: "time-limit"`). */
  timeLimitMs: number;
  /** Told the child's pid once it started (tests check it is gone after a cancel). */
  onStart?(pid: number): void;
}

export interface LineRunResult {
  argv: string[];
  /** null when killed by a signal or when it could not start. */
  exitCode: number | null;
  output: string;
  stopped: "cancelled" | "time-limit" | null;
  /** Set when the command could not start (ENOENT …). */
  startError: string | null;
}

export function runLines(argv: string[], options: LineRunOptions): Promise<LineRunResult> {
  const [file, ...args] = argv;
  if (!file) return Promise.reject(new Error("runLines: empty argv"));
  return new Promise((resolve) => {
    let output = "";
    let stopped: LineRunResult["stopped"] = null;
    let startError: string | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
    if (child.pid !== undefined) options.onStart?.(child.pid);
    const keep = (line: string) => {
      if (output.length < MAX_OUTPUT_CHARS) output += `${line}\n`.slice(0, MAX_OUTPUT_CHARS - output.length);
      options.onLine(line);
    };
    // Each stream is split into lines on its own, so a line of stdout never takes in the start of one of stderr.
    const rests: string[] = [];
    [child.stdout, child.stderr].forEach((stream, i) => {
      rests[i] = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        let rest = (rests[i] ?? "") + chunk;
        let nl = rest.indexOf("\n");
        while (nl >= 0) {
          keep(rest.slice(0, nl));
          rest = rest.slice(nl + 1);
          nl = rest.indexOf("\n");
        }
        rests[i] = rest;
      });
    });
    const stop = (why: "cancelled" | "time-limit") => {
      if (stopped || child.exitCode !== null || child.signalCode !== null) return;
      stopped = why;
      child.kill("SIGINT");
      killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    };
    const limit = setTimeout(() => stop("time-limit"), options.timeLimitMs);
    const onAbort = () => stop("cancelled");
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", (err) => {
      startError = err.message;
    });
    child.once("close", (code) => {
      clearTimeout(limit);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      for (const rest of rests) if (rest) keep(rest);
      resolve({ argv, exitCode: code, output, stopped, startError });
    });
  });
}
