/**
 * Bringing a seeded, configured fleet online against Tern's server: a few
 * raw device links (device-load worker, the latency probes) and the rest as
 * simulated devices (simulator worker), each in its own process. Every
 * device gets its first config as a job on connecting, like a fleet
 * onboarding; "online" means connected and that job complete.
 */
import { sleep } from "../cases/util.ts";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { BenchContext, BenchMode } from "../types.ts";
import { benchIdentitySeed, FLEET_PREFIX } from "./fleet-plan.ts";
import type { Fleet, TernServer } from "./tern.ts";

let sizeOverride: number[] | null = null;

/** `--devices 200,2000`: fleet sizes of every server case in this run instead of the mode's. */
export function overrideFleetSizes(sizes: number[] | null): void {
  sizeOverride = sizes;
}

/** Fleet sizes of the server cases: issue 8's "three sizes" in full runs. */
export function fleetSizes(mode: BenchMode): number[] {
  return sizeOverride ?? (mode === "quick" ? [1000] : [1000, 5000, 10_000]);
}

/** Raw probe links among N devices: a tenth, at least 20, at most 1,000, and never more than half the fleet. */
export function probeCount(devices: number): number {
  return Math.max(1, Math.min(Math.floor(devices / 2), 1000, Math.max(20, Math.round(devices / 10))));
}

export interface OnlineFleet {
  sim: Worker;
  probes: Worker;
  probeCount: number;
  stop(): Promise<void>;
}

export async function startLoadWorkers(): Promise<{ sim: Worker; probes: Worker }> {
  const sim = spawnWorker(workerPath("simulator"), { nodeFlags: ["--expose-gc"] });
  const probes = spawnWorker(workerPath("device-load"), { nodeFlags: ["--expose-gc"] });
  await Promise.all([sim.ready, probes.ready]);
  return { sim, probes };
}

/** Waits until `ok` holds, polling; returns the elapsed ms, or throws with `what` after the time-out. */
export async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await fn()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface RampResult {
  /** From the first connection to every device welcomed. */
  connectMs: number;
  /** From the first connection to every first job complete. */
  onlineMs: number;
  failed: number;
  firstError: string | null;
}

/**
 * Connects probe links [from, probes) and simulated devices [probes, N), then
 * waits for every device's first job to complete.
 */
export async function rampFleet(
  fleet: Fleet,
  tern: TernServer,
  workers: { sim: Worker; probes: Worker },
  opts: { from: number; probes: number; statusIntervalMs: number },
  ctx: BenchContext,
): Promise<RampResult> {
  const n = fleet.seed.devices;
  const t0 = performance.now();
  const pr = await workers.probes.call<{ ready: number; failed: number; firstError: string | null }>("connect", {
    url: tern.wsUrl,
    secret: fleet.tokenSecret,
    fleet: n,
    from: opts.from,
    count: opts.probes - opts.from,
    concurrency: 100,
  });
  await workers.sim.call("create", {
    options: {
      server: tern.url,
      token: "unused: the fleet is seeded",
      count: n - opts.probes,
      startIndex: opts.probes,
      machinePrefix: FLEET_PREFIX,
      identitySeed: benchIdentitySeed(fleet.tokenSecret),
      statusIntervalMs: opts.statusIntervalMs,
      concurrency: 200,
    },
  });
  await workers.sim.call("useFleetCredentials", { secret: fleet.tokenSecret });
  const sim = await workers.sim.call<{ ready: number; failures: number }>("connect", {}, 1_800_000);
  const connectMs = performance.now() - t0;
  ctx.log(`  ${pr.ready + sim.ready} devices connected in ${(connectMs / 1000).toFixed(1)} s; waiting for their first jobs`);
  await waitFor(
    "every first job to complete",
    async () => (await tern.worker.call<Record<string, number>>("jobCounts", { type: "modify" })).complete === n,
    1_800_000,
    500,
  ).catch(async (err) => {
    const counts = await tern.worker.call("jobCounts", { type: "modify" });
    throw new Error(`${(err as Error).message}: jobs ${JSON.stringify(counts)}`);
  });
  return {
    connectMs,
    onlineMs: performance.now() - t0,
    failed: pr.failed + sim.failures,
    firstError: pr.firstError,
  };
}
