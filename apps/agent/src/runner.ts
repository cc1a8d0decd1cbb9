/**
 * Every command the agent runs goes through a Runner: argv arrays (never shell
 * strings), LC_ALL=C, a time-out, and argv + exit code + stderr in every error.
 * Tests swap in a recording fake.
 */
import { execa } from "execa";

export interface RunOptions {
  /** Milliseconds before the command is killed (default 30 s). */
  timeoutMs?: number;
  /** Text written to the command's stdin. */
  input?: string;
  /** Resolve instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
  env?: Record<string, string>;
}

export interface RunResult {
  argv: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface Runner {
  run(argv: string[], options?: RunOptions): Promise<RunResult>;
}

export class CommandError extends Error {
  constructor(readonly result: RunResult) {
    super(`${result.argv.join(" ")}: exit ${result.exitCode}: ${result.stderr.trim() || result.stdout.trim()}`);
    this.name = "CommandError";
  }
}

/** Runs commands for real with execa. */
export class ExecRunner implements Runner {
  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    const [file, ...args] = argv;
    if (!file) throw new Error("run: empty argv");
    const r = await execa(file, args, {
      reject: false,
      timeout: options.timeoutMs ?? 30_000,
      input: options.input,
      env: { ...options.env, LC_ALL: "C" },
      stripFinalNewline: false,
    });
    const exitCode = r.exitCode ?? (r.timedOut ? 124 : 1);
    const result: RunResult = {
      argv,
      exitCode,
      stdout: String(r.stdout ?? ""),
      stderr: r.timedOut ? `timed out after ${options.timeoutMs ?? 30_000} ms` : String(r.stderr ?? r.message ?? ""),
    };
    if (exitCode !== 0 && !options.allowFailure) throw new CommandError(result);
    return result;
  }
}
