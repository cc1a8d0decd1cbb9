/**
 * One lab per scenario file: a topology brought up with its control plane
 * (server, relays, real agents, onboarding through the API) in a temporary
 * state root, a logged-in API client, and small helpers the scenarios share.
 * Scenarios drive Tern only through the REST API; they look at the routers
 * (ping, tcpdump, swanctl, vtysh) only to check what really happened.
 */
import { resolve } from "node:path";
import { type ExecResult, run } from "@tern/netlab";
import { Device, type DeviceInterface, type HealingMode, Job, Tunnel } from "@tern/protocol";
import { z } from "zod";
import { type ApiClient, LabControl, waitFor, waitForConfigApplied } from "../../../src/lab/control/index.ts";
import { labDown } from "../../../src/lab/down.ts";
import type { Lab } from "../../../src/lab/lab.ts";
import { formatPhase } from "../../../src/lab/progress.ts";
import { labUp } from "../../../src/lab/up.ts";
import { leftovers, TOPOLOGIES, tempStateRoot } from "../../helpers.ts";

export { waitFor } from "../../../src/lab/control/index.ts";

/** Commands the scenarios need besides the lab's own prerequisites. */
export const SCENARIO_COMMANDS = [
  "ip",
  "nft",
  "iptables",
  "tc",
  "ping",
  "fping",
  "gcc",
  "charon-systemd",
  "swanctl",
  "vtysh",
  "keepalived",
  "kea-dhcp4",
  "dhclient",
  "tcpdump",
  "conntrack",
];

export interface ScenarioLab {
  lab: Lab;
  control: LabControl;
  api: ApiClient;
  /** `lab up` to ready, seconds. */
  upSeconds: number;
  deviceId(edge: string): string;
  device(edge: string): Promise<Device>;
  /** An interface of an edge's device, by name. */
  iface(edge: string, name: string): Promise<DeviceInterface>;
  ns(node: string): string;
  /** Runs a command inside a node's namespace (never throws; check exitCode). */
  sh(node: string, argv: string[], timeoutMs?: number): Promise<ExecResult>;
  /** Waits until the devices report their desired config applied and no job is open or failed. */
  settled(edges?: string[], timeoutMs?: number): Promise<void>;
  down(): Promise<{ namespaces: string[]; processes: number[] }>;
}

/** Brings `topology` (a file of test-harness/topologies, or an absolute path) up with Tern managing its edges. */
export async function upScenarioLab(
  topology: string,
  opts: { databaseUrl?: string; serverEnv?: Record<string, string> } = {},
): Promise<ScenarioLab> {
  const root = await tempStateRoot();
  const t0 = performance.now();
  let lab: Lab | null = null;
  try {
    const r = await labUp(resolve(TOPOLOGIES, topology), {
      stateRoot: root.root,
      control: true,
      databaseUrl: opts.databaseUrl,
      serverEnv: opts.serverEnv,
    });
    lab = r.lab;
    const upSeconds = (performance.now() - t0) / 1000;
    console.log(`${topology}: lab up in ${upSeconds.toFixed(1)}s\n${r.phases.map(formatPhase).join("\n")}`);
    const control = await LabControl.open(r.lab);
    const api = await control.api();
    const ids = control.devices;
    const up = r.lab;
    const s: ScenarioLab = {
      lab: up,
      control,
      api,
      upSeconds,
      deviceId: (edge) => {
        const id = ids[edge];
        if (!id) throw new Error(`no device for '${edge}' (devices: ${Object.keys(ids).join(", ")})`);
        return id;
      },
      device: (edge) => api.get(`/api/devices/${s.deviceId(edge)}`, Device),
      iface: async (edge, name) => {
        const d = await s.device(edge);
        const i = d.interfaces.find((x) => x.name === name);
        if (!i) throw new Error(`${edge} has no interface ${name}`);
        return i;
      },
      ns: (node) => up.nsName(node),
      sh: (node, argv, timeoutMs = 60_000) =>
        run(["ip", "netns", "exec", up.nsName(node), ...argv], { allowFailure: true, timeoutMs }),
      settled: (edges = up.plan.edges, timeoutMs = 120_000) =>
        waitForConfigApplied(
          api,
          edges.map((e) => s.deviceId(e)),
          timeoutMs,
        ),
      down: async () => {
        const { label, id } = up.store.state;
        await labDown(root.root, up.name);
        await root.remove();
        return leftovers(label, id);
      },
    };
    return s;
  } catch (err) {
    if (lab) await labDown(root.root, lab.name).catch(() => {});
    await root.remove();
    throw err;
  }
}

/** Waits until every job in `ids` completed; a failed one throws with the device's words. */
export async function jobsComplete(api: ApiClient, ids: string[], timeoutMs = 120_000): Promise<Job[]> {
  let done: Job[] = [];
  await waitFor(timeoutMs, async () => {
    if (ids.length === 0) return true;
    const jobs = await api.get("/api/jobs", z.array(Job), { ids: ids.join(","), limit: 1000 });
    const failed = jobs.filter((j) => j.state === "failed");
    if (failed.length > 0)
      throw new Error(`job failed: ${failed.map((j) => `${j.device.name} ${j.type}: ${j.error?.message ?? "?"}`).join("; ")}`);
    done = jobs;
    const open = jobs.filter((j) => j.state !== "complete");
    return open.length === 0 && jobs.length === ids.length
      ? true
      : `open: ${open.map((j) => `${j.device.name} ${j.type} ${j.state}`).join(", ")}`;
  });
  return done;
}

export const JobsQueued = z.object({ jobIds: z.array(z.string()) });

/** Sets the healing mode of `edge`'s organization and waits for the config jobs it queues. */
export async function setHealingMode(s: ScenarioLab, mode: HealingMode, edge = "site-a"): Promise<void> {
  const path = `/api/organizations/${(await s.device(edge)).org}/healing`;
  const r = await s.api.call("PUT", path, JobsQueued.partial(), { body: { mode } });
  await jobsComplete(s.api, r.data.jobIds ?? []);
}

export async function getTunnel(api: ApiClient, id: string): Promise<Tunnel> {
  return api.get(`/api/tunnels/${id}`, Tunnel);
}

/**
 * Assertions that depend on the server's live status (tunnel status and
 * quality from reports, BGP/VRRP status reads, notifications from the rule
 * engine): named in the failure so a red scenario says which part of the
 * server it is waiting for.
 */
export const NEEDS_LIVE_STATUS = "needs the server's live status and notification engine (branch notify)";

/**
 * Live checks of one scenario. A failed check is recorded and the scenario
 * goes on with what the routers themselves show, so everything that does not
 * depend on live status is still exercised; `assertAll()` at the end fails
 * with every recorded check. After a first failure, later checks look once
 * instead of waiting out their time-out (the feature is missing, not slow).
 */
export class LiveChecks {
  private readonly failures: string[] = [];

  async wait(what: string, timeoutMs: number, check: () => Promise<true | string>): Promise<boolean> {
    try {
      await waitFor(this.failures.length > 0 ? 0 : timeoutMs, check, 1000);
      return true;
    } catch (err) {
      this.failures.push(`${what}: ${(err as Error).message}`);
      return false;
    }
  }

  assertAll(): void {
    if (this.failures.length > 0) throw new Error(`${NEEDS_LIVE_STATUS}:\n${this.failures.map((f) => `  - ${f}`).join("\n")}`);
  }
}

/** Waits until one ping from `from` to `to` is answered (a tunnel being negotiated, a route being moved). */
export async function waitForPing(s: ScenarioLab, from: string, to: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    timeoutMs,
    async () =>
      (await s.sh(from, ["ping", "-n", "-c", "1", "-W", "1", to])).exitCode === 0 ? true : `${from} cannot reach ${to}`,
    200,
  );
}

/**
 * The router loses power: its agent and every daemon in its namespace get
 * SIGKILL (nothing is told, nothing is cleaned up).
 */
export async function powerOff(s: ScenarioLab, edge: string): Promise<void> {
  await s.control.stopAgent(edge, "kill");
  const pids = (await run(["ip", "netns", "pids", s.ns(edge)], { allowFailure: true })).stdout.split(/\s+/).filter(Boolean);
  for (const pid of pids) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Power comes back: the agent starts and re-applies its last good configuration. */
export async function powerOn(s: ScenarioLab, edge: string): Promise<void> {
  await s.control.startAgent(edge);
}
