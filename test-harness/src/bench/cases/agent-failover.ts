/**
 * Agent (c): how long a LAN goes without its gateway when the VRRP master is
 * lost. Two routers configured by the real agent share a virtual IP
 * (keepalived, VRRPv3, fast adverts, preemption); the master's LAN link goes
 * down; a host pinging the virtual IP every 10 ms times the outage.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Netns, run } from "@tern/netlab";
import { requireLab } from "../agent/lab.ts";
import { applyWithAgent, buildVrrpLab, holdsVip, transitions, VIP, type VrrpLab, vrrpConfig } from "../agent/vrrp-lab.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";
import { sleep } from "./util.ts";
import type { VrrpBoundParams } from "./vrrp-bound.ts";

export interface FailoverParams extends Params {
  advertIntervalMs: number;
  repeats: number;
}

const PRIORITY = { master: 200, backup: 100 };

/** `ping -D` every 10 ms from the host; stopped with SIGINT so it flushes what it printed. */
function startPinger(host: Netns): { child: ChildProcess; stop(): Promise<string> } {
  const child = spawn("ip", ["netns", "exec", host.name, "ping", "-D", "-n", "-i", "0.01", "-W", "1", VIP], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  child.stdout?.on("data", (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    async stop() {
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
      return out;
    },
  };
}

/** Replies as [epoch seconds, icmp_seq]. */
function replies(out: string): [number, number][] {
  return [...out.matchAll(/^\[(\d+\.\d+)\] \d+ bytes from [\d.]+: icmp_seq=(\d+)/gm)].map((m) => [Number(m[1]), Number(m[2])]);
}

export const agentFailover: BenchCase<FailoverParams> = {
  name: "agent-failover",
  kind: "agent",
  title: "VRRP failover: master's LAN link lost → backup serving",
  description:
    "Two routers on one LAN bridge, each configured by `tern-agent apply` (standalone: the agent renders and starts " +
    "keepalived, VRRPv3, priorities 200/100, preemption, `advertIntervalMs`). A host pings the virtual IP every 10 ms " +
    "(`ping -D`). The master's LAN link is set down: figures are the time until the backup's keepalived reports MASTER " +
    "(the agent's notify script) and until the host's pings are answered again, median of `repeats` (the master comes " +
    "back and preempts in between). Baseline: `vrrp-bound`, the protocol's master-down interval for these settings.",
  sizes: (mode) =>
    mode === "quick"
      ? [{ advertIntervalMs: 100, repeats: 2 }]
      : [
          { advertIntervalMs: 100, repeats: 5 },
          { advertIntervalMs: 1000, repeats: 3 },
        ],
  async run(params, ctx) {
    requireLab(["keepalived", "ping"]);
    const bound = {
      case: "vrrp-bound",
      params: { advertIntervalMs: params.advertIntervalMs, backupPriority: PRIORITY.backup } satisfies VrrpBoundParams,
      key: "master-down-ms",
    };
    let lab: VrrpLab | undefined;
    try {
      lab = await buildVrrpLab();
      const { r1, r2, host } = lab;
      await applyWithAgent(r1, vrrpConfig(r1, 1, PRIORITY.master, params.advertIntervalMs));
      await applyWithAgent(r2, vrrpConfig(r2, 2, PRIORITY.backup, params.advertIntervalMs));
      const masterIsR1 = async () => (await holdsVip(r1)) && !(await holdsVip(r2));
      const toMaster: number[] = [];
      const toServing: number[] = [];
      for (let i = 0; i < params.repeats; i++) {
        await Netns.waitFor("r1 master, r2 backup", masterIsR1, 30_000, 50);
        const pinger = startPinger(host);
        // Served by r1 first: ARP resolved and answers flowing (checked from the output below).
        await sleep(400);
        const down = Date.now() / 1000;
        await run(["ip", "-n", r1.ns.name, "link", "set", "lan0", "down"]);
        await Netns.waitFor("r2 takes the virtual IP", () => holdsVip(r2), 30_000, 20);
        await sleep(Math.max(500, 3 * params.advertIntervalMs));
        const out = await pinger.stop();
        const rs = replies(out);
        const before = rs.filter(([t]) => t <= down);
        if (before.length === 0) throw new Error(`the host got no answer from ${VIP} before the failover:\n${out.slice(0, 500)}`);
        const lastSeq = before.at(-1)![1];
        // The first answer after the gap the failover left (answers r1 sent just before its link went down do not count).
        const back = rs.find(([t, seq]) => t > down && seq > lastSeq + 1);
        if (!back) throw new Error(`no answer from ${VIP} after the failover`);
        toServing.push((back[0] - down) * 1000);
        const master = (await transitions(r2, "MASTER")).find((t) => t > down);
        if (master !== undefined) toMaster.push((master - down) * 1000);
        ctx.log(
          `agent-failover: r2 MASTER after ${toMaster.at(-1)?.toFixed(0)} ms, pings answered after ${toServing.at(-1)!.toFixed(0)} ms`,
        );
        await run(["ip", "-n", r1.ns.name, "link", "set", "lan0", "up"]);
      }
      return {
        figures: [
          {
            key: "to-master-ms",
            label: "master lost → backup MASTER (median)",
            value: toMaster.length ? summarize(toMaster).p50 : null,
            unit: "ms",
            better: "lower",
            baseline: bound,
          },
          {
            key: "to-serving-ms",
            label: "master lost → host's pings answered (median)",
            value: summarize(toServing).p50,
            unit: "ms",
            better: "lower",
            baseline: bound,
          },
        ],
        notes:
          toMaster.length < toServing.length
            ? [`the backup's notify log had a MASTER entry for ${toMaster.length} of ${toServing.length} failovers`]
            : [],
        details: { toMasterMs: toMaster, toServingMs: toServing },
      };
    } finally {
      await lab?.cleanup();
    }
  },
};
