/** Pieces the commands share: the context of a running command, argument parsers, job lists. */
import { InvalidArgumentError } from "@commander-js/extra-typings";
import type { Job } from "@tern/client";
import { type CommandContext, createContext, type GlobalOptions } from "../context.ts";
import { CliError, ExitCode, usageError } from "../exit-codes.ts";
import { watchJobs } from "../support/jobs-watch.ts";
import type { Column } from "../support/output.ts";
import { stdinIsTerminal } from "../support/prompt.ts";

/** The context of the command being run, with the global options (--json, --org) wherever they were given. */
export function contextOf(command: { optsWithGlobals(): unknown }): CommandContext {
  return createContext(command.optsWithGlobals() as GlobalOptions);
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of 1 or more");
  return n;
}

export function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number of seconds");
  return n;
}

export const jobColumns: Column<Job>[] = [
  { header: "id", value: (j) => j.id },
  { header: "type", value: (j) => j.type },
  { header: "state", value: (j) => j.state },
  { header: "device", value: (j) => j.device.name },
  { header: "created", value: (j) => j.createdAt },
  { header: "error", value: (j) => j.error?.message },
];

/** Prints queued jobs, or waits for them with --wait; exit 7 when one failed. */
export async function reportJobs(
  ctx: CommandContext,
  jobIds: readonly string[],
  wait: { wait?: boolean; timeout?: number },
  result: Record<string, unknown>,
): Promise<void> {
  if (!wait.wait || jobIds.length === 0) {
    ctx.printer.result({ ...result, jobIds }, () =>
      jobIds.length ? `queued job(s) ${jobIds.join(" ")}: follow with \`tern jobs watch ${jobIds.join(" ")}\`` : "no job queued",
    );
    return;
  }
  const tern = await ctx.connect();
  const jobs = await watchJobs(tern, jobIds, {
    intervalMs: 500,
    timeoutMs: (wait.timeout ?? 300) * 1000,
    progress: !ctx.printer.json,
  });
  finishJobs(ctx, jobs, result);
}

export function finishJobs(ctx: CommandContext, jobs: Job[], result: Record<string, unknown> = {}): void {
  if (ctx.printer.json) ctx.printer.result({ ...result, jobs }, () => "");
  else ctx.printer.list(jobs, jobColumns, "no jobs");
  const failed = jobs.filter((j) => j.state === "failed");
  if (failed.length) throw new CliError(`${failed.length} of ${jobs.length} job(s) failed`, ExitCode.JOB_FAILED, "JOB_FAILED");
}

/** A destructive command goes ahead with --yes, or after a yes at a terminal; a script must pass --yes. */
export async function confirm(question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!stdinIsTerminal()) throw usageError(`${question}: pass --yes (stdin is not a terminal, so tern does not ask)`);
  const { default: ask } = await import("@inquirer/confirm");
  if (!(await ask({ message: `${question}?`, default: false }))) throw new CliError("cancelled", ExitCode.USAGE, "CANCELLED");
}
