/**
 * Agent (a, end to end): an admin creates a tunnel through the REST API of the
 * real server; how long until both agents applied it, until it carries
 * traffic, and until the API shows it Connected. The lab's two-sites topology
 * with its control plane (real server on PGlite, real agents, onboarding
 * through the API), as the end-to-end scenarios use it. Full runs only: the
 * control plane takes 30–40 s to come up on a busy 2-core machine.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "@tern/netlab";
import { Device, Job, Tunnel, TunnelsCreated } from "@tern/protocol";
import { z } from "zod";
import { agentStateDir, LabControl, waitForConfigApplied } from "../../lab/control/index.ts";
import { labDown } from "../../lab/down.ts";
import type { Lab } from "../../lab/lab.ts";
import { labUp } from "../../lab/up.ts";
import { DAEMON_COMMANDS, requireLab } from "../agent/lab.ts";
import type { BenchCase, Params } from "../types.ts";
import type { ConvergenceParams } from "./raw-apply.ts";
import { sleep } from "./util.ts";

const TOPOLOGY = fileURLToPath(new URL("../../../topologies/two-sites.yaml", import.meta.url));

export interface ApiTunnelParams extends Params {
  /** Give up waiting for a milestone after this long (its figure is then empty). */
  timeoutMs: number;
}

/** Polls `check` until true; resolves with the elapsed ms since `t0`, or null at the deadline. */
async function until(t0: number, timeoutMs: number, intervalMs: number, check: () => Promise<boolean>): Promise<number | null> {
  for (;;) {
    if (await check().catch(() => false)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) return null;
    await sleep(intervalMs);
  }
}

export const agentApiTunnel: BenchCase<ApiTunnelParams> = {
  name: "agent-api-tunnel",
  kind: "agent",
  title: "tunnel created at the API → applied, carrying traffic, Connected",
  description:
    "The lab's two-sites topology with its control plane (the real server on PGlite, the real agents, onboarded through " +
    "the API, initial configs applied). `POST /api/tunnels` between the sites' WANs, then, from that request: both jobs " +
    "`complete`, the first ping between the tunnel loopbacks (IKEv2 up), `tunnelStatus` Connected in `GET " +
    "/api/tunnels/{id}` (from the agents' status reports). Full runs only. Baseline: `raw-apply`'s script start → ping over " +
    "the tunnel (both routers configured entirely by script): the ratio is the whole control path against the tools alone.",
  sizes: (mode) => (mode === "quick" ? [] : [{ timeoutMs: 120_000 }]),
  async run(params, ctx) {
    requireLab([...DAEMON_COMMANDS, "iptables", "gcc"]);
    const base = { case: "raw-apply", params: { changes: 10 } satisfies ConvergenceParams, key: "tunnel-ms" };
    const root = await mkdtemp(join(os.tmpdir(), "tern-bench-api-"));
    await chmod(root, 0o755);
    let lab: Lab | undefined;
    try {
      const up = performance.now();
      lab = (await labUp(TOPOLOGY, { stateRoot: root, control: true })).lab;
      const control = await LabControl.open(lab);
      const api = await control.api();
      const ids = [control.devices["site-a"]!, control.devices["site-b"]!];
      await waitForConfigApplied(api, ids, params.timeoutMs);
      ctx.log(`agent-api-tunnel: lab with control plane up and configured in ${((performance.now() - up) / 1000).toFixed(1)} s`);
      const wan0 = async (id: string) => (await api.get(`/api/devices/${id}`, Device)).interfaces.find((i) => i.name === "wan0")!;
      const [ifA, ifB] = await Promise.all(ids.map(wan0));

      const t0 = performance.now();
      const created = await api.call("POST", "/api/tunnels", TunnelsCreated, {
        body: { deviceA: ids[0], interfaceA: ifA!.id, deviceB: ids[1], interfaceB: ifB!.id },
      });
      const answerMs = performance.now() - t0;
      if (created.status !== 202) throw new Error(`POST /api/tunnels answered ${created.status}, expected 202`);
      const { id: tunnelId, loopbackA, loopbackB } = created.data.tunnels[0]!;
      const nsA = lab.nsName("site-a");
      let lastPing = "";
      const [jobsMs, pingMs, connectedMs] = await Promise.all([
        until(t0, params.timeoutMs, 50, async () => {
          const jobs = await api.get("/api/jobs", z.array(Job), { ids: created.data.jobIds.join(","), limit: 100 });
          if (jobs.some((j) => j.state === "failed")) throw new Error("a tunnel job failed");
          return jobs.length === created.data.jobIds.length && jobs.every((j) => j.state === "complete");
        }),
        until(t0, params.timeoutMs, 25, async () => {
          const r = await run(["ip", "netns", "exec", nsA, "fping", "-c", "1", "-t", "100", "-q", "-S", loopbackA, loopbackB], {
            allowFailure: true,
          });
          lastPing = r.stderr.trim();
          return r.exitCode === 0;
        }),
        until(
          t0,
          params.timeoutMs,
          100,
          async () => (await api.get(`/api/tunnels/${tunnelId}`, Tunnel)).tunnelStatus === "Connected",
        ),
      ]);
      const notes: string[] = [];
      if (jobsMs === null) notes.push(`the tunnel jobs were not complete within ${params.timeoutMs} ms`);
      if (pingMs === null) {
        notes.push(`no ping crossed the tunnel within ${params.timeoutMs} ms (last fping: ${lastPing})`);
        const sh = async (argv: string[]) => (await run(["ip", "netns", "exec", nsA, ...argv], { allowFailure: true })).stdout;
        const vici = `unix://${join(agentStateDir(lab.dir, "site-a"), "run", "ikev2", "charon.vici")}`;
        ctx.log(`agent-api-tunnel: site-a SAs:\n${await sh(["swanctl", "--list-sas", "--uri", vici])}`);
        for (const edge of ["site-a", "site-b"]) {
          const log = join(agentStateDir(lab.dir, edge), "run", "ikev2", "charon.log");
          ctx.log(
            `agent-api-tunnel: ${edge} charon.log:\n${(await run(["tail", "-n", "40", log], { allowFailure: true })).stdout}`,
          );
        }
      }
      if (connectedMs === null) notes.push(`the API did not show the tunnel Connected within ${params.timeoutMs} ms`);
      return {
        figures: [
          {
            key: "answer-ms",
            label: "POST /api/tunnels answered (compiled, jobs queued)",
            value: answerMs,
            unit: "ms",
            better: "lower",
            baseline: base,
          },
          {
            key: "jobs-ms",
            label: "tunnel created → both jobs complete",
            value: jobsMs,
            unit: "ms",
            better: "lower",
            baseline: base,
          },
          {
            key: "ping-ms",
            label: "tunnel created → ping over the tunnel",
            value: pingMs,
            unit: "ms",
            better: "lower",
            baseline: base,
          },
          {
            key: "connected-ms",
            label: "tunnel created → Connected in the API",
            value: connectedMs,
            unit: "ms",
            better: "lower",
            baseline: base,
          },
        ],
        notes,
      };
    } finally {
      if (lab) await labDown(root, lab.name).catch(() => {});
      await rm(root, { recursive: true, force: true });
    }
  },
};
