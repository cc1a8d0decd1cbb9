/**
 * Issue 14: a fleet reconnecting after a server restart. N configured devices
 * (simulated, each with its own back-off) are online and reconciled; one
 * request queues a job for every device (a multi-link policy installed on
 * all), and right after its answer the server process is killed (SIGKILL:
 * no clean shutdown, links cut, jobs queued, in flight and done). A new
 * server starts on the same database and port; every device reconnects.
 * Figures: time from the kill and from the new server's start until every
 * device is online and until every device is reconciled (applied hash =
 * desired hash), and the jobs: each queued job complete exactly once, none
 * failed or lost, and how many went out again. Baseline: bare `ws`
 * connections opened per second at the same N (ws-echo-connections), read
 * against the devices brought back online per second.
 */
import pg from "pg";
import { cpuPercent, listenOverflows, readMachineUsage, readProcUsage } from "../proc-usage.ts";
import { fleetSizes, startLoadWorkers, waitFor } from "../server/connect.ts";
import { benchIdentitySeed, FLEET_PREFIX } from "../server/fleet-plan.ts";
import { api, login, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import type { BenchCase, Params } from "../types.ts";
import { sleep, stopAll } from "./util.ts";
import { type EchoConnectionsParams, echoConnectionsParams } from "./ws-echo-connections.ts";

export interface ServerRestartParams extends Params {
  devices: number;
}

interface FleetState {
  connected: number;
  reconciled: number;
  jobs: Record<string, number>;
  resent: number;
  devicesWithOtherThanOneJob: number;
}

/** Job states by count, read straight from the database (the server is dead at that moment). */
async function jobStates(url: string, type: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ state: string; n: number }>(
      "select state, count(*)::int as n from jobs where type = $1 group by state",
      [type],
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  } finally {
    await c.end();
  }
}

export const serverRestart: BenchCase<ServerRestartParams> = {
  name: "server-restart",
  kind: "server",
  title: "A fleet reconnecting after a server restart (kill -9), PostgreSQL",
  description:
    "N configured devices, all simulated (with the simulator's reconnect back-off: 1 s doubling to 30 s, ±20 %), online and " +
    "reconciled; one request queues a job for each (a multi-link policy installed on all), and right after its answer Tern's " +
    "server is killed with SIGKILL. A new server starts on the same database and port; every device reconnects. Times are " +
    "from the kill and from the new server listening, until every device is online (the server's gauge) and until every " +
    "device is reconciled (applied hash = desired hash in the database). Jobs: the policy's N jobs must each end complete, " +
    "one per device, none failed; 'sent again' counts jobs whose apply went out twice (in flight at the kill: an apply " +
    "re-sent is idempotent, the device applies the same hash), 'repeated' devices that received the same config twice. " +
    "Baseline: bare ws connections opened per second at the same N (ws-echo-connections).",
  sizes: (mode) => fleetSizes(mode).map((devices) => ({ devices })),
  async run(params, ctx) {
    const n = params.devices;
    const echo: EchoConnectionsParams = echoConnectionsParams(ctx.mode, n);
    await ctx.measure("ws-echo-connections", echo);
    const scratch = await scratchDatabase("pg", ctx);
    let tern: TernServer | undefined;
    let workers: Awaited<ReturnType<typeof startLoadWorkers>> | undefined;
    try {
      const fleet = await seedScratch(scratch, { devices: n, configure: true }, ctx);
      tern = await startTern(fleet, ctx);
      workers = await startLoadWorkers();
      const { sim } = workers;
      const t0 = performance.now();
      await sim.call("create", {
        options: {
          server: tern.url,
          token: "unused: the fleet is seeded",
          count: n,
          startIndex: 0,
          machinePrefix: FLEET_PREFIX,
          identitySeed: benchIdentitySeed(fleet.tokenSecret),
          statusIntervalMs: 10_000,
          concurrency: 200,
        },
      });
      await sim.call("useFleetCredentials", { secret: fleet.tokenSecret });
      await sim.call("connect", {}, 1_800_000);
      const state = () => tern!.worker.call<FleetState>("fleetState", { type: "mlpolicy" });
      await waitFor("every device reconciled", async () => (await state()).reconciled === n, 1_800_000, 500);
      ctx.log(`  ${n} devices online and reconciled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

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
      await sim.call("mark");
      const res = await api<{ jobIds: string[] }>(tern.url, token, "POST", `/mlpolicies/${policy.body.id}/install`, {
        filter: [],
      });
      const queued = res.body.jobIds.length;
      // Killed right after the answer: some applies went out, some are in flight, most still queued.
      const port = new URL(tern.url).port;
      const killedAt = performance.now();
      const overflows0 = listenOverflows();
      process.kill(tern.pid, "SIGKILL");
      await tern.worker.stop();
      const atKill = await jobStates(scratch.url!, "mlpolicy");
      ctx.log(`  killed the server after queueing ${queued} jobs; jobs at the kill: ${JSON.stringify(atKill)}`);

      tern = await startTern(fleet, ctx, { PORT: port });
      const upAt = performance.now();
      ctx.log(`  new server listening ${((upAt - killedAt) / 1000).toFixed(1)} s after the kill`);
      let online = 0;
      // Each second after the new server listened: devices online, upgrades refused as busy, and the CPU
      // (100 % = one core) of the server, of the simulated fleet and of the whole machine (PostgreSQL is
      // most of the rest) over that second.
      const curve: { s: number; online: number; refused: number; serverCpu: number; simCpu: number; machineCpu: number }[] = [];
      const serverPid = tern.pid;
      let last = { server: readProcUsage(serverPid), sim: readProcUsage(sim.pid), machine: readMachineUsage() };
      const onlineMs = await waitFor(
        "every device online again",
        async () => {
          const stats = await tern!.worker.call<{ connected: number; admissionRefusals: number }>("stats");
          online = stats.connected;
          const s = Math.floor((performance.now() - upAt) / 1000);
          if (curve.length === 0 || curve.at(-1)!.s < s || online === n) {
            const now = { server: readProcUsage(serverPid), sim: readProcUsage(sim.pid), machine: readMachineUsage() };
            curve.push({
              s,
              online,
              refused: stats.admissionRefusals,
              serverCpu: Math.round(cpuPercent(last.server, now.server)),
              simCpu: Math.round(cpuPercent(last.sim, now.sim)),
              machineCpu: Math.round(cpuPercent(last.machine, now.machine)),
            });
            last = now;
          }
          return online === n;
        },
        600_000,
        100,
      );
      const overflows1 = listenOverflows();
      const reconciledMs = await waitFor(
        "every device reconciled",
        async () => (await state()).reconciled === n,
        600_000,
        100,
      ).then((ms) => ms + onlineMs);
      const jobsDoneMs = await waitFor(
        "every policy job ended",
        async () => {
          const j = (await state()).jobs;
          return (j.queued ?? 0) + (j.running ?? 0) === 0;
        },
        600_000,
        200,
      ).then((ms) => ms + reconciledMs);
      await sleep(1000);
      const after = await state();
      const applies = await sim.call<{ devices: number; applies: number; repeated: number }>("applyCounts");
      ctx.log(
        `  all online ${(onlineMs / 1000).toFixed(1)} s and reconciled ${(reconciledMs / 1000).toFixed(1)} s after the new server started; jobs ${JSON.stringify(after.jobs)}, sent again ${after.resent}`,
      );
      const notes: string[] = [];
      const complete = after.jobs.complete ?? 0;
      if (complete !== queued)
        notes.push(`${queued - complete} of ${queued} queued jobs did not end complete: ${JSON.stringify(after.jobs)}`);
      if (after.devicesWithOtherThanOneJob > 0)
        notes.push(`${after.devicesWithOtherThanOneJob} devices have other than one policy job (doubled or lost)`);
      notes.push(
        "times from the kill include the server's own start (process, migrations check, listening) and the devices' back-off; the baseline is a connection rate, not a restart",
      );
      const rate = { case: "ws-echo-connections", params: echo, key: "connect-rate" };
      return {
        figures: [
          {
            key: "online-rate",
            label: "devices back online per second (new server listening → all online)",
            value: n / (onlineMs / 1000),
            unit: "dev/s",
            better: "higher",
            baseline: rate,
          },
          {
            key: "online-from-start-ms",
            label: "new server listening → every device online",
            value: onlineMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "online-from-kill-ms",
            label: "kill → every device online",
            value: upAt - killedAt + onlineMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "reconciled-from-start-ms",
            label: "new server listening → every device reconciled (applied = desired)",
            value: reconciledMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "reconciled-from-kill-ms",
            label: "kill → every device reconciled",
            value: upAt - killedAt + reconciledMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "refused-busy",
            label: "upgrades refused as busy (503, Retry-After) until every device was online",
            value: curve.at(-1)?.refused ?? 0,
            unit: "count",
            better: "lower",
          },
          {
            key: "listen-overflows",
            label: "connections dropped from a full accept queue until every device was online (kernel, whole machine)",
            value: overflows0 === null || overflows1 === null ? null : overflows1 - overflows0,
            unit: "count",
            better: "lower",
          },
          { key: "jobs-queued", label: "jobs queued before the kill", value: queued, unit: "count", better: "higher" },
          {
            key: "jobs-complete",
            label: "of those, complete after the restart",
            value: complete,
            unit: "count",
            better: "higher",
          },
          { key: "jobs-failed", label: "of those, failed", value: after.jobs.failed ?? 0, unit: "count", better: "lower" },
          {
            key: "jobs-doubled",
            label: "devices with other than one policy job (doubled or lost)",
            value: after.devicesWithOtherThanOneJob,
            unit: "count",
            better: "lower",
          },
          {
            key: "jobs-resent",
            label: "jobs whose apply went out again (in flight at the kill)",
            value: after.resent,
            unit: "count",
            better: "lower",
          },
          {
            key: "devices-repeated",
            label: "devices that received the same config twice",
            value: applies.repeated,
            unit: "count",
            better: "lower",
          },
        ],
        notes,
        details: { atKill, after, applies, jobsDoneMs, serverUpAfterKillMs: upAt - killedAt, online: curve, seed: fleet.seed },
      };
    } finally {
      await workers?.sim.call("stop", {}, 60_000).catch(() => undefined);
      await stopAll(workers?.sim, workers?.probes);
      await tern?.stop();
      await scratch.drop();
    }
  },
};
