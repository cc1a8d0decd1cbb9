/**
 * Runs `tern` as a user would: a separate process with its own HOME and
 * XDG_CONFIG_HOME (a temporary directory per test file), stdin a pipe (not a
 * terminal) carrying `input` or nothing.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, inject } from "vitest";

export interface TernRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = unknown>(): T;
}

export interface TernRunner {
  home: string;
  configDir: string;
  run(args: string[], options?: { input?: string; env?: Record<string, string> }): Promise<TernRun>;
}

export function useTern(): TernRunner {
  const runner = { home: "", configDir: "" } as TernRunner;
  beforeAll(async () => {
    runner.home = await mkdtemp(path.join(tmpdir(), "tern-cli-home-"));
    runner.configDir = path.join(runner.home, "config");
  });
  afterAll(async () => {
    if (runner.home) await rm(runner.home, { recursive: true, force: true });
  });
  runner.run = (args, options = {}) =>
    new Promise((resolve, reject) => {
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: runner.home,
        XDG_CONFIG_HOME: runner.configDir,
        ...options.env,
      };
      const child = spawn(process.execPath, ["--enable-source-maps", inject("ternBin"), ...args], { env, stdio: "pipe" });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) =>
        resolve({
          code: code ?? -1,
          stdout,
          stderr,
          json<T>() {
            try {
              return JSON.parse(stdout) as T;
            } catch {
              throw new Error(`tern ${args.join(" ")}: stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
            }
          },
        }),
      );
      child.stdin.end(options.input ?? "");
    });
  return runner;
}

export interface TerminalStep {
  /** Wait until the screen so far matches this… */
  expect: RegExp;
  /** …then type this (\r is Enter). */
  send: string;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/**
 * Runs `tern` on a pseudo-terminal (util-linux `script`), answering prompts as
 * a person would. Returns the exit code and everything the terminal showed,
 * without colours and cursor movements (`raw` keeps them).
 */
export function runAtTerminal(
  runner: TernRunner,
  args: string[],
  steps: TerminalStep[] = [],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number; screen: string; raw: string }> {
  // A pty made by `script` has no size; give it one like a real terminal's.
  const command = `stty cols 120 rows 40; exec ${[process.execPath, inject("ternBin"), ...args].map(shellQuote).join(" ")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: runner.home,
        XDG_CONFIG_HOME: runner.configDir,
        TERM: "xterm",
        ...options.env,
      },
      stdio: "pipe",
    });
    let screen = "";
    let step = 0;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`tern ${args.join(" ")} at a terminal timed out; screen:\n${screen}`));
    }, options.timeoutMs ?? 20_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
      while (step < steps.length && steps[step]!.expect.test(screen)) child.stdin.write(steps[step++]!.send);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, screen: stripVTControlCharacters(screen), raw: screen });
    });
  });
}
