/** tern jobs ls | watch */
import type { Command } from "@commander-js/extra-typings";
import { ok } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { watchJobs } from "../support/jobs-watch.ts";
import { resolveDevice } from "../support/resolve.ts";
import { contextOf, finishJobs, jobColumns, positiveInt, seconds } from "./shared.ts";

const STATES = ["queued", "running", "complete", "failed"] as const;

export function registerJobs(program: Command<[], { json?: boolean; org?: string }>): void {
  const jobs = program.command("jobs").alias("job").description("Configuration jobs sent to devices");

  jobs
    .command("ls")
    .alias("list")
    .description("List jobs, newest first")
    .option("--state <state>", `only jobs in this state (${STATES.join(", ")})`)
    .option("--device <device>", "only jobs of this device (id or name)")
    .option("--limit <n>", "at most this many (default 20, at most 1000)", positiveInt)
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const filter: { key: string; op: string; val: unknown }[] = [];
      if (opts.state) {
        if (!(STATES as readonly string[]).includes(opts.state)) throw usageError(`--state: one of ${STATES.join(", ")}`);
        filter.push({ key: "state", op: "==", val: opts.state });
      }
      if (opts.device) filter.push({ key: "device.id", op: "==", val: (await resolveDevice(tern, opts.device)).id });
      const rows = await ok(
        tern.api.GET("/api/jobs", {
          params: { query: { limit: opts.limit ?? 20, ...(filter.length ? { filter: JSON.stringify(filter) } : {}) } },
        }),
      );
      ctx.printer.list(rows, jobColumns, "no jobs");
    });

  jobs
    .command("watch")
    .description("Follow jobs until they are done, with live progress (default: every job queued or running now)")
    .argument("[job...]", "job ids")
    .option("--interval <seconds>", "poll this often (default 1)", seconds)
    .option("--timeout <seconds>", "give up after this long (default 600; 0: never)", seconds)
    .action(async (ids, opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      let watched = ids;
      if (watched.length === 0) {
        const open = await ok(
          tern.api.GET("/api/jobs", {
            params: { query: { limit: 1000, filter: JSON.stringify([{ key: "state", op: "in", val: ["queued", "running"] }]) } },
          }),
        );
        watched = open.map((j) => j.id);
        if (watched.length === 0) {
          ctx.printer.result({ jobs: [] }, () => "no job is queued or running");
          return;
        }
      }
      const final = await watchJobs(tern, watched, {
        intervalMs: Math.max(0.1, opts.interval ?? 1) * 1000,
        timeoutMs: (opts.timeout ?? 600) * 1000,
        progress: !ctx.printer.json,
      });
      finishJobs(ctx, final);
    });
}
