/**
 * Agent (a): how long the real agent takes from `apply` received to every
 * driver applied, for a full config and for a one-field change, and until its
 * IKEv2 tunnel carries traffic. Each router runs `tern-agent run` against its
 * own fake gateway (in its namespace), which times apply → apply-result.
 */
import type { DriverResult } from "@tern/protocol";
import { type ManagedAgent, startManagedAgent, stopManagedAgent } from "../agent/agent.ts";
import { oneFieldChange, routerAConfig, routerBConfig } from "../agent/configs.ts";
import { buildRouterLab, DAEMON_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import { tunnelAnswers } from "../agent/tunnel-wait.ts";
import { summarize } from "../stats.ts";
import type { BenchCase } from "../types.ts";
import { type ConvergenceParams, convergenceSizes } from "./raw-apply.ts";

interface Applied {
  ms: number;
  result: { ok: boolean; error?: string; drivers: DriverResult[] };
}

export const agentConvergence: BenchCase<ConvergenceParams> = {
  name: "agent-convergence",
  kind: "agent",
  title: "agent convergence: full config, one-field change, tunnel up",
  description:
    "Two lab routers, each running the real `tern-agent run` (standalone mode) registered with a fake gateway in its " +
    "namespace. Router B gets its full config first; then router A's full config (interfaces, static route, DHCP, eBGP, " +
    "firewall + 1:1 NAT, 2 IKEv2 tunnels, VRRP, link-quality policy, QoS) is timed from `apply` sent to `apply-result` " +
    "received (every driver applied; per-driver times in details), then until a ping crosses the tunnel to B; then " +
    "`changes` one-field changes (the port of an inbound firewall rule, back and forth), median. Baseline: `raw-apply`, " +
    "the same rendered commands run by a plain script.",
  sizes: convergenceSizes,
  async run(params, ctx) {
    requireLab(DAEMON_COMMANDS);
    const base = { case: "raw-apply", params };
    let lab: RouterLab | undefined;
    let a: ManagedAgent | undefined;
    let b: ManagedAgent | undefined;
    try {
      lab = await buildRouterLab("bconv");
      [a, b] = await Promise.all([startManagedAgent(lab.a), startManagedAgent(lab.b)]);
      const apply = async (agent: ManagedAgent, config: unknown): Promise<Applied> => {
        const r = await agent.gateway.call<Applied>("apply", { config });
        if (!r.result.ok) throw new Error(`apply failed: ${r.result.error}\nagent log:\n${await agent.daemon.logTail()}`);
        return r;
      };
      await apply(b, routerBConfig(b.deviceId, lab.b));
      const configA = routerAConfig(a.deviceId, lab.a);
      const t0 = performance.now();
      const full = await apply(a, configA);
      const tunnelMs = (await tunnelAnswers(lab.a)) - t0;
      const changes: Applied[] = [];
      let current = configA;
      for (let i = 0; i < params.changes; i++) {
        current = oneFieldChange(current);
        changes.push(await apply(a, current));
      }
      const driverMs = Object.fromEntries(full.result.drivers.map((d) => [d.driver, d.durationMs]));
      ctx.log(`agent-convergence: full ${full.ms.toFixed(0)} ms (${JSON.stringify(driverMs)}), tunnel ${tunnelMs.toFixed(0)} ms`);
      return {
        figures: [
          {
            key: "full-ms",
            label: "full config: apply → apply-result (all drivers)",
            value: full.ms,
            unit: "ms",
            better: "lower",
            baseline: { ...base, key: "full-ms" },
          },
          {
            key: "tunnel-ms",
            label: "full config: apply → ping over the tunnel",
            value: tunnelMs,
            unit: "ms",
            better: "lower",
            baseline: { ...base, key: "tunnel-ms" },
          },
          {
            key: "one-field-ms",
            label: "one-field change: apply → apply-result (median)",
            value: summarize(changes.map((c) => c.ms)).p50,
            unit: "ms",
            better: "lower",
            baseline: { ...base, key: "one-field-ms" },
          },
        ],
        details: {
          fullDriverMs: driverMs,
          oneFieldMs: changes.map((c) => c.ms),
          // Where a one-field change spends its time: every driver checks its part of the system, changed or not.
          oneFieldDriverMs: changes.map((c) => Object.fromEntries(c.result.drivers.map((d) => [d.driver, d.durationMs]))),
          oneFieldChangedDrivers: changes[0]?.result.drivers.filter((d) => d.changed).map((d) => d.driver) ?? [],
        },
      };
    } finally {
      await stopManagedAgent(a);
      await stopManagedAgent(b);
      await lab?.cleanup();
    }
  },
};
