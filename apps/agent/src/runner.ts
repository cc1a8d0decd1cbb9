/**
 * Every command the agent runs goes through a Runner: argv arrays (never shell
 * strings), LC_ALL=C, a time-out, and argv + exit code + stderr in every error.
 * Long-running helpers whose output is read as it comes (fping for the
 * probes) go through a Spawner, with the same conventions. Tests swap in
 * recording fakes of both.
 */

/** execa (about 2 MiB of heap once loaded) is imported by the first command, not when the agent starts. */
const loadExeca = () => import("execa").then((m) => m.execa);

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

/** Runs commands for real with execa. */
export class ExecRunner implements Runner {
  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    const [file, ...args] = argv;
    if (!file) throw new Error("run: empty argv");
    const execa = await loadExeca();
    const r = await execa(file, args, {
      reject: false,
      timeout: options.timeoutMs ?? 30_000,
      input: options.input,
      env: { ...options.env, ...COMMAND_ENV },
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

/** Spawns for real with execa. */
export class ExecSpawner implements Spawner {
  spawn(argv: string[], onLine: (line: string) => void, onExit: (code: number | null) => void): SpawnedProcess {
    const [file, ...args] = argv;
    if (!file) throw new Error("spawn: empty argv");
    let stopped = false;
    let child: ReturnType<Awaited<ReturnType<typeof loadExeca>>> | undefined;
    let rest = "";
    const feed = (chunk: Buffer | string) => {
      rest += String(chunk);
      let nl = rest.indexOf("\n");
      while (nl >= 0) {
        onLine(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        nl = rest.indexOf("\n");
      }
    };
    // Started once execa is loaded (at once after the first time); stopped before that, it never starts and
    // ends as a killed one does (exit code null).
    void loadExeca().then(
      (execa) => {
        if (stopped) return onExit(null);
        const c = execa(file, args, {
          reject: false,
          buffer: false,
          stdin: "ignore",
          env: COMMAND_ENV,
          stripFinalNewline: false,
        });
        child = c;
        c.stdout?.on("data", feed);
        c.stderr?.on("data", feed);
        void c.then((r) => onExit(r.exitCode ?? null));
      },
      () => onExit(null),
    );
    return {
      stop: () => {
        stopped = true;
        child?.kill("SIGTERM");
      },
    };
  }
}
