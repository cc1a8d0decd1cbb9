/**
 * Waits for jobs to finish, polling GET /api/jobs?ids=… (the server has no
 * event stream yet), with a live progress line on a terminal (ora, on
 * stderr) and one line per change otherwise, so logs of scripts show
 * progress too. Returns the jobs in their final state.
 */
import { type Job, ok, type TernClient } from "@tern/client";
import ora from "ora";
import { CliError, ExitCode } from "../exit-codes.ts";

export interface WatchOptions {
  intervalMs: number;
  /** Give up after this long (exit 1); 0: wait for ever. */
  timeoutMs: number;
  /** Show progress (off with --json). */
  progress: boolean;
}

const FINAL = new Set<Job["state"]>(["complete", "failed"]);
const IDS_PER_CALL = 1000;

export function progressText(jobs: readonly Job[]): string {
  const count = (state: Job["state"]) => jobs.filter((j) => j.state === state).length;
  const done = count("complete") + count("failed");
  const parts = [`${count("running")} running`, `${count("queued")} queued`];
  if (count("failed")) parts.push(`${count("failed")} failed`);
  return `jobs: ${done}/${jobs.length} done (${parts.join(", ")})`;
}

async function fetchJobs(tern: TernClient, ids: readonly string[]): Promise<Job[]> {
  const jobs: Job[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_CALL) {
    const page = ids.slice(i, i + IDS_PER_CALL);
    jobs.push(...(await ok(tern.api.GET("/api/jobs", { params: { query: { ids: page.join(","), limit: page.length } } }))));
  }
  return jobs;
}

export async function watchJobs(tern: TernClient, ids: readonly string[], options: WatchOptions): Promise<Job[]> {
  // A terminal with a width only: ora divides by it (a pty without a size reports 0 columns).
  const terminal = process.stderr.isTTY === true && (process.stderr.columns ?? 0) > 0;
  // discardStdin off: ora would otherwise put a terminal's stdin in raw mode and hold it open.
  const spinner = options.progress && terminal ? ora({ stream: process.stderr, discardStdin: false }) : null;
  const lines = options.progress && !spinner;
  const started = Date.now();
  let last = "";
  spinner?.start(`jobs: waiting for ${ids.length}`);
  try {
    for (;;) {
      const jobs = await fetchJobs(tern, ids);
      if (jobs.length < ids.length) {
        const missing = ids.filter((id) => !jobs.some((j) => j.id === id));
        throw new CliError(`no job ${missing.join(", ")} in this organization`, ExitCode.NOT_FOUND, "NOT_FOUND");
      }
      const text = progressText(jobs);
      if (text !== last) {
        if (lines) process.stderr.write(`${text}\n`);
        if (spinner) spinner.text = text;
        last = text;
      }
      if (jobs.every((j) => FINAL.has(j.state))) {
        const failed = jobs.some((j) => j.state === "failed");
        if (failed) spinner?.fail(text);
        else spinner?.succeed(text);
        return jobs;
      }
      if (options.timeoutMs > 0 && Date.now() - started > options.timeoutMs) {
        spinner?.fail(text);
        throw new CliError(`timed out after ${Math.round(options.timeoutMs / 1000)} s: ${text}`, ExitCode.API_ERROR, "TIMEOUT");
      }
      await new Promise((r) => setTimeout(r, options.intervalMs));
    }
  } finally {
    if (spinner?.isSpinning) spinner.stop();
  }
}
