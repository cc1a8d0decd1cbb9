/**
 * Issue 8 (3): job fan-out. With N devices online (as in server-devices), one
 * API call installs a multi-link policy on every device
 * (`POST /api/mlpolicies/{id}/install {filter: []}`): the server recompiles N
 * configs and queues N jobs in the request's transaction, and the gateway
 * sends each device its apply. Timed from the request until every simulated
 * device has answered and until every job is complete in the database.
 * Baseline: a bare ws server sending an apply-sized message to N connections.
 */
import { readProcUsage } from "../proc-usage.ts";
import { fleetSizes, probeCount, rampFleet, startLoadWorkers, waitFor } from "../server/connect.ts";
import { api, login, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import { perSecond, summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";
import { bodyBucket } from "./http-static.ts";
import { sleep, stopAll } from "./util.ts";
import type { BroadcastParams } from "./ws-broadcast.ts";

export interface ServerFanoutParams extends Params {
  devices: number;
}

export const serverFanout: BenchCase<ServerFanoutParams> = {
  name: "server-fanout",
  kind: "server",
  title: "Tern server job fan-out: one API change, a job for every device (PostgreSQL)",
  description:
    "N seeded devices (4 tunnels each) are brought online as in server-devices (status every 10 s). Then one request, " +
    "`POST /api/mlpolicies/{id}/install` with `{filter: []}` (every device), makes the server recompile N configs and queue N " +
    "`mlpolicy` jobs in one transaction; the gateway sends each device its `apply`, the devices answer. Figures: the request's " +
    "answer time (compile and queue), time until every device has answered, until every job is `complete` in the database, jobs " +
    "per second over that, and per-job latency p50/p99 (request sent → the job's `finished_at`). Wall clocks of the processes " +
    "on one machine are compared. Baseline: ws-broadcast, a bare ws server sending a message of the apply's size to N " +
    "connections and timing the answers.",
  sizes: (mode) => fleetSizes(mode).map((devices) => ({ devices })),
  async run(params, ctx) {
    const scratch = await scratchDatabase("pg", ctx);
    let tern: TernServer | undefined;
    let workers: Awaited<ReturnType<typeof startLoadWorkers>> | undefined;
    try {
      const fleet = await seedScratch(scratch, { devices: params.devices, configure: true }, ctx);
      tern = await startTern(fleet, ctx);
      workers = await startLoadWorkers();
      const { sim } = workers;
      const ramp = await rampFleet(
        fleet,
        tern,
        workers,
        { from: 0, probes: probeCount(params.devices), statusIntervalMs: 10_000 },
        ctx,
      );
      ctx.log(`  ${params.devices} devices online in ${(ramp.onlineMs / 1000).toFixed(1)} s`);
      const applyBytes = (await tern.worker.call<{ bytes: number }>("applyBytes")).bytes;
      const broadcast: BroadcastParams = { connections: params.devices, bytes: bodyBucket(applyBytes) };

      const token = await login(tern.url);
      const label = await api<{ id: string }>(tern.url, token, "POST", "/pathlabels", { name: "bench-internet", type: "DIA" });
      const policy = await api<{ id: string }>(tern.url, token, "POST", "/mlpolicies", {
        name: "bench-policy",
        rules: [
          {
            name: "voice",
            priority: 1,
            match: { protocol: "udp", ports: "5060-5061" },
            action: { order: "link-quality", pathlabels: [label.body.id] },
          },
        ],
      });
      await sleep(2000);
      await sim.call("mark");
      const sentAt = Date.now();
      const cpu0 = readProcUsage(tern.pid);
      const t0 = performance.now();
      const res = await api<{ jobIds: string[] }>(tern.url, token, "POST", `/mlpolicies/${policy.body.id}/install`, {
        filter: [],
      });
      const answeredMs = performance.now() - t0;
      const jobs = res.body.jobIds.length;
      ctx.log(`  install answered ${res.status} with ${jobs} jobs in ${answeredMs.toFixed(0)} ms`);
      const simDevices = params.devices - probeCount(params.devices);
      const ackMs = await waitFor(
        "every simulated device's apply-result",
        async () => (await sim.call<{ count: number }>("applyResults", {})).count >= simDevices,
        600_000,
        20,
      ).then((ms) => ms + answeredMs);
      const doneMs = await waitFor(
        "every mlpolicy job complete",
        async () => ((await tern!.worker.call<Record<string, number>>("jobCounts", { type: "mlpolicy" })).complete ?? 0) >= jobs,
        600_000,
        20,
      ).then((ms) => ms + ackMs);
      // Tern's own CPU for the fan-out (answer, recompile, sends, results; the fleet's statuses too, a small share):
      // CPU seconds move less with the machine's load than wall time.
      const cpu1 = readProcUsage(tern.pid);
      const cpuMsPerJob = ((cpu1.cpuSeconds - cpu0.cpuSeconds) * 1000) / Math.max(1, jobs);
      const times = await tern.worker.call<{ created: number[]; started: number[]; finished: number[] }>("jobTimes", {
        type: "mlpolicy",
      });
      const acks = await sim.call<{ times: number[] }>("applyResults", { times: true });
      const perJob = summarize(times.finished.map((f) => f - sentAt));
      const perAck = summarize(acks.times.map((t) => t - sentAt));
      ctx.log(`  every device answered after ${ackMs.toFixed(0)} ms, every job complete after ${doneMs.toFixed(0)} ms`);
      // Progress second by second from the request: a stall shows as a run of small counts.
      const timeline = {
        sent: perSecond(times.started, sentAt),
        answered: perSecond(acks.times, sentAt),
        complete: perSecond(times.finished, sentAt),
      };
      for (const [what, counts] of Object.entries(timeline)) ctx.log(`  ${what} per second: ${counts.join(" ")}`);
      // ws-broadcast is measured by the runner after this case (its size is the apply's, known only now).
      const ref = (key: string) => ({ case: "ws-broadcast", params: broadcast, key });
      const notes: string[] = [];
      if (jobs !== params.devices) notes.push(`${jobs} jobs queued for ${params.devices} devices`);
      return {
        figures: [
          {
            key: "request-ms",
            label: "install request answered (compile + queue N jobs)",
            value: answeredMs,
            unit: "ms",
            better: "lower",
            baseline: ref("all-answered-ms"),
          },
          {
            key: "all-acked-ms",
            label: "every simulated device answered its apply",
            value: ackMs,
            unit: "ms",
            better: "lower",
            baseline: ref("all-answered-ms"),
          },
          {
            key: "all-complete-ms",
            label: "every job complete in the database",
            value: doneMs,
            unit: "ms",
            better: "lower",
            baseline: ref("all-answered-ms"),
          },
          {
            key: "jobs-per-sec",
            label: "jobs completed per second",
            value: jobs / (doneMs / 1000),
            unit: "jobs/s",
            better: "higher",
            baseline: ref("answers-per-sec"),
          },
          {
            key: "job-latency-p50",
            label: "per job: request → complete p50",
            value: perJob.p50,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p50"),
          },
          {
            key: "job-latency-p99",
            label: "per job: request → complete p99",
            value: perJob.p99,
            unit: "ms",
            better: "lower",
            baseline: ref("latency-p99"),
          },
          {
            key: "server-cpu-per-job",
            label: "server CPU per job (request → every job complete)",
            value: cpuMsPerJob,
            unit: "ms",
            better: "lower",
          },
        ],
        notes,
        details: { ramp, applyBytes, jobs, perJob, perAck, timeline, seed: fleet.seed, serverCpu: [cpu0, cpu1] },
      };
    } finally {
      await workers?.sim.call("stop", {}, 60_000).catch(() => undefined);
      await stopAll(workers?.sim, workers?.probes);
      await tern?.stop();
      await scratch.drop();
    }
  },
};
