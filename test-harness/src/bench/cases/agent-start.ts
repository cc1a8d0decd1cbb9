/**
 * Agent start-up: `tern-agent --help` (a command that loads the dispatcher only) and, in a lab router, the
 * time from spawning `tern-agent run` to its hello at a fake gateway (connected), both against bare node's
 * start in the same run (node-start).
 */
import { AGENT_BIN, startManagedAgent, stopManagedAgent } from "../agent/agent.ts";
import { buildRouterLab, LAB_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import type { BenchCase, Params } from "../types.ts";
import type { NodeStartParams } from "./node-start.ts";
import { timeCommand } from "./util.ts";

export interface AgentStartParams extends Params {
  runs: number;
}

export const agentStart: BenchCase<AgentStartParams> = {
  name: "agent-start",
  kind: "agent",
  title: "agent start-up: --help, and start to connected",
  description:
    "`tern-agent --help` run `runs` times through its bin (the bundle on plain node): the median wall time. Then the " +
    "real `tern-agent run` (standalone) in a lab router, registered with the simulator's fake gateway in the router's " +
    "namespace: from spawning it to the gateway seeing its hello. Baseline: `node-start`, bare node with the same flags.",
  sizes: (mode) => [{ runs: mode === "quick" ? 5 : 15 }],
  async run(params, ctx) {
    const base = { case: "node-start", params: { runs: params.runs } satisfies NodeStartParams, key: "start-ms" };
    const helpMs = await timeCommand([AGENT_BIN, "--help"], params.runs);
    requireLab(LAB_COMMANDS);
    let lab: RouterLab | undefined;
    let agent: Awaited<ReturnType<typeof startManagedAgent>> | undefined;
    try {
      lab = await buildRouterLab("bstart");
      agent = await startManagedAgent(lab.a);
      ctx.log(`agent-start: --help ${helpMs.toFixed(0)} ms, run to connected ${agent.connectedMs.toFixed(0)} ms`);
      return {
        figures: [
          { key: "help-ms", label: "tern-agent --help (median)", value: helpMs, unit: "ms", better: "lower", baseline: base },
          {
            key: "connected-ms",
            label: "tern-agent run: spawn to hello at the gateway",
            value: agent.connectedMs,
            unit: "ms",
            better: "lower",
            baseline: base,
          },
        ],
      };
    } finally {
      await stopManagedAgent(agent);
      await lab?.cleanup();
    }
  },
};
