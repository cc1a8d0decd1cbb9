/**
 * Agent (c, kernel half): a WAN that breaks in the kernel → the agent moves
 * the matching traffic, measured beside the probe-driven move of
 * agent-path-failover in the same run. Router A runs the real `tern-agent
 * run` with its full config (two labelled WANs, a link-quality rule: at most
 * 2 % loss, 10 s hold-down). Three breaks of wan0, one after another, each
 * followed by the agent moving back once probes confirm wan0 again:
 * 1. probe-driven: the WAN router drops 50 % of what it sends to wan0;
 * 2. carrier lost: the WAN router sets its end of wan0's veth down;
 * 3. address removed: wan0's address is deleted on router A.
 * Then 4. address changed: wan0's address is replaced by another; the figure
 * is the time until charon's connections are loaded from the new address.
 * The kernel figures come from `ip -o -ts monitor` in router A (kernel event →
 * route change, both as the kernel announced them; agent/kernel-monitor.ts).
 */
import { Netns } from "@tern/netlab";
import { type ManagedAgent, startManagedAgent, stopManagedAgent } from "../agent/agent.ts";
import { routerAConfig } from "../agent/configs.ts";
import { addressDeleted, carrierLost, KernelMonitor, tableRouteVia } from "../agent/kernel-monitor.ts";
import { buildRouterLab, DAEMON_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";
import { policyDevice, wanLoss } from "./agent-path-failover.ts";
import { sleep } from "./util.ts";

export interface KernelFailoverParams extends Params {
  /** Carrier losses and address removals each (median); the probe-driven move and the address change run once. */
  repeats: number;
  /** Good probes before the first break, so the windows hold measurements. */
  warmMs: number;
}

const TABLE = 30000;
const WAN0 = { address: "10.100.1.2", prefix: 24, other: "10.100.1.77" };

export const agentKernelFailover: BenchCase<KernelFailoverParams> = {
  name: "agent-kernel-failover",
  kind: "agent",
  title: "WAN broken in the kernel → traffic moved (netlink-driven beside probe-driven)",
  description:
    "Router A runs the real `tern-agent run` with its full config (tunnels without path labels; rule `link-quality`, at " +
    "most 2 % loss, 10 s hold-down; WAN gateways probed every 500 ms). In one run: the WAN router drops 50 % toward " +
    "wan0 (probe-driven: time from the nft change to the rule's table routing by wan1); the WAN router sets its end " +
    "of wan0's veth down (carrier lost); wan0's address is deleted on router A; each time the agent moves back after " +
    "probes confirm wan0 and the hold-down. Kernel figures: time from the kernel's announcement of the carrier loss " +
    "or address deletion to its announcement of the table's new route (`ip -o -ts monitor` in router A). Last, wan0's " +
    "address is replaced: time until charon's connections are loaded from the new address.",
  sizes: (mode) => [{ repeats: mode === "quick" ? 1 : 3, warmMs: 10_000 }],
  async run(params, ctx) {
    requireLab(DAEMON_COMMANDS);
    let lab: RouterLab | undefined;
    let agent: ManagedAgent | undefined;
    let monitor: KernelMonitor | undefined;
    try {
      lab = await buildRouterLab("bkern");
      agent = await startManagedAgent(lab.a);
      const config = routerAConfig(agent.deviceId, lab.a);
      config.tunnels = config.tunnels.map((t) => ({ ...t, pathLabel: null }));
      const applied = await agent.gateway.call<{ result: { ok: boolean; error?: string } }>("apply", { config });
      if (!applied.result.ok) throw new Error(`apply failed: ${applied.result.error}`);
      const ra = lab.a.ns;
      const wan = lab.wan;
      const onWan0 = () => Netns.waitFor("the policy on wan0", async () => (await policyDevice(ra)) === "wan0", 90_000, 100);
      const onWan1 = (ms: number) => Netns.waitFor("the policy on wan1", async () => (await policyDevice(ra)) === "wan1", ms, 5);
      await onWan0();
      await sleep(params.warmMs);
      monitor = new KernelMonitor(ra.name);
      await monitor.ready();

      // 1. Probe-driven, as agent-path-failover.
      let t0 = performance.now();
      await wanLoss(wan, "a0", 50);
      await onWan1(60_000);
      const probeMs = performance.now() - t0;
      ctx.log(`agent-kernel-failover: probe-driven (50 % loss) → wan1 after ${probeMs.toFixed(0)} ms`);
      await wanLoss(wan, "a0", 0);
      await onWan0();

      // 2. Carrier lost at the far end of wan0's veth (veth has no `carrier off`: EOPNOTSUPP), and
      // 3. address removed on router A (the agent's reconcile adds the configured one back).
      const carrier: number[] = [];
      const address: number[] = [];
      const carrierBack: number[] = [];
      const missed = () =>
        new Error(`ip monitor did not see both ends of a move:\n${monitor!.lines.map((l) => l.text).join("\n")}`);
      for (let i = 0; i < params.repeats; i++) {
        let from = monitor.mark();
        await wan.exec(["ip", "link", "set", "a0", "down"]);
        await onWan1(5_000);
        await sleep(200);
        const c = monitor.between(carrierLost("wan0"), tableRouteVia(TABLE, "wan1"), from);
        if (c === null) throw missed();
        carrier.push(c);
        ctx.log(`agent-kernel-failover: carrier lost → wan1 after ${c.toFixed(1)} ms (kernel timestamps)`);
        const tBack = performance.now();
        await wan.exec(["ip", "link", "set", "a0", "up"]);
        await onWan0();
        carrierBack.push(performance.now() - tBack);

        from = monitor.mark();
        await ra.exec(["ip", "addr", "del", `${WAN0.address}/${WAN0.prefix}`, "dev", "wan0"]);
        await onWan1(5_000);
        await sleep(200);
        const a = monitor.between(addressDeleted("wan0"), tableRouteVia(TABLE, "wan1"), from);
        if (a === null) throw missed();
        address.push(a);
        ctx.log(`agent-kernel-failover: address removed → wan1 after ${a.toFixed(1)} ms (kernel timestamps)`);
        await onWan0();
      }

      // 4. Address changed: charon's connections follow the new one.
      const vici = `unix://${lab.a.stateDir}/run/ikev2/charon.vici`;
      t0 = performance.now();
      await ra.exec([
        "sh",
        "-c",
        `ip addr del ${WAN0.address}/${WAN0.prefix} dev wan0 && ip addr add ${WAN0.other}/${WAN0.prefix} dev wan0`,
      ]);
      await Netns.waitFor(
        "charon's connections on the new address",
        async () => {
          const r = await ra.exec(["swanctl", "--list-conns", "--uri", vici], { allowFailure: true });
          return new RegExp(`local:\\s+${WAN0.other.replaceAll(".", "\\.")}\\b`).test(r.stdout);
        },
        30_000,
        20,
      );
      const rekeyMs = performance.now() - t0;
      ctx.log(`agent-kernel-failover: address changed → IKE connections from ${WAN0.other} after ${rekeyMs.toFixed(0)} ms`);

      const figure = (key: string, label: string, value: number) => ({ key, label, value, unit: "ms", better: "lower" as const });
      return {
        figures: [
          figure("carrier-ms", "WAN carrier lost → traffic moved (kernel-driven, median)", summarize(carrier).p50),
          figure("address-ms", "WAN address removed → traffic moved (kernel-driven, median)", summarize(address).p50),
          figure("probe-ms", "path degraded (50 % loss) → traffic moved (probe-driven, same run)", probeMs),
          figure("rekey-ms", "WAN address changed → IKE connections loaded from the new address", rekeyMs),
        ],
        details: { carrierMs: carrier, carrierBackMs: carrierBack, addressMs: address, probeMs, rekeyMs },
      };
    } finally {
      await monitor?.stop();
      await stopManagedAgent(agent);
      await lab?.cleanup();
    }
  },
};
