/**
 * Every command the agent runs goes through a Runner: argv arrays (never shell
 * strings), LC_ALL=C, a time-out, and argv + exit code + stderr in every error.
 * Long-running helpers whose output is read as it comes (fping for the
 * probes) go through a Spawner, with the same conventions. Tests swap in
 * recording fakes of both.
 */

import { execFile, spawn } from "node:child_process";

/** Set for every command: parsable, untranslated output. */
const COMMAND_ENV = { LC_ALL: "C" } as const;

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

/** After a time-out's SIGTERM, a command that is still there gets SIGKILL this much later. */
const KILL_AFTER_MS = 5000;
/** Output kept per stream; `nft -j list ruleset` of a large firewall is a few MiB. */
const MAX_OUTPUT_BYTES = 64 * 2 ** 20;

/**
 * The environment of every command: the agent's own (as any child inherits it), then the caller's, then LC_ALL=C.
 * Node's child_process, not execa: execa and its dependencies kept about 2 MiB resident in an idle agent, which
 * runs `ip -j …` for every status report (agent-footprint bench, docs/bench.md); execFile does all this runner needs.
 */
const commandEnv = (extra?: Record<string, string>) => ({ ...process.env, ...extra, ...COMMAND_ENV });

/** Runs commands for real (node:child_process). */
export class ExecRunner implements Runner {
  run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    const [file, ...args] = argv;
    if (!file) return Promise.reject(new Error("run: empty argv"));
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      let timedOut = false;
      let forceKill: NodeJS.Timeout | undefined;
      const child = execFile(
        file,
        args,
        { encoding: "utf8", maxBuffer: MAX_OUTPUT_BYTES, env: commandEnv(options.env) },
        (err, stdout, stderr) => {
          clearTimeout(timer);
          clearTimeout(forceKill);
          // err.code: the exit code, or a string (ENOENT: no such command; ERR_CHILD_PROCESS_STDIO_MAXBUFFER).
          const code = (err as (NodeJS.ErrnoException & { code?: number | string }) | null)?.code;
          const exitCode = timedOut ? 124 : err === null ? 0 : typeof code === "number" ? code : 1;
          const result: RunResult = {
            argv,
            exitCode,
            stdout,
            stderr: timedOut
              ? `timed out after ${timeoutMs} ms`
              : err !== null && typeof code !== "number" && !stderr
                ? err.message
                : stderr,
          };
          if (exitCode !== 0 && !options.allowFailure) reject(new CommandError(result));
          else resolve(result);
        },
      );
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGTERM");
        forceKill = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
      }, timeoutMs);
      // Input, or at once end of input: a command that reads stdin must not wait for the time-out.
      child.stdin?.on("error", () => undefined); // a command that exits without reading its input
      child.stdin?.end(options.input ?? "");
    });
  }
}

/** A long-running process started by a Spawner. */
export interface SpawnedProcess {
  stop(): void;
}

/**
 * Starts a process that keeps running and hands its output (stdout and
 * stderr) over line by line; `onExit` gets its exit code when it ends.
 */
export interface Spawner {
  spawn(argv: string[], onLine: (line: string) => void, onExit: (code: number | null) => void): SpawnedProcess;
}

/** Spawns for real (node:child_process). */
export class ExecSpawner implements Spawner {
  spawn(argv: string[], onLine: (line: string) => void, onExit: (code: number | null) => void): SpawnedProcess {
    const [file, ...args] = argv;
    if (!file) throw new Error("spawn: empty argv");
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env: commandEnv() });
    // Each stream is split into lines on its own, so a line of stdout never takes in the start of one of stderr.
    for (const stream of [child.stdout, child.stderr]) {
      let rest = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        rest += chunk;
        let nl = rest.indexOf("\n");
        while (nl >= 0) {
          onLine(rest.slice(0, nl));
          rest = rest.slice(nl + 1);
          nl = rest.indexOf("\n");
        }
      });
    }
    // A command that cannot start (ENOENT) emits "error" and "close"; one that ran emits "close": report once.
    let ended = false;
    const end = (code: number | null) => {
      if (ended) return;
      ended = true;
      onExit(code);
    };
    child.once("error", () => end(null));
    child.once("close", (code) => end(code));
    return { stop: () => void child.kill("SIGTERM") };
  }
}
