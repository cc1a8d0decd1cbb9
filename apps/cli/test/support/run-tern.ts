/**
 * Runs `tern` as a user would: a separate process with its own HOME and
 * XDG_CONFIG_HOME (a temporary directory per test file), stdin a pipe (not a
 * terminal) carrying `input` or nothing.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
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
