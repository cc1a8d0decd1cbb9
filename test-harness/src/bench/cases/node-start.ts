/** Baseline of agent-start: how long plain node with the agent's flags takes to start and exit, doing nothing. */
import { agentNodeFlags } from "../agent/agent.ts";
import type { BenchCase, Params } from "../types.ts";
import { timeCommand } from "./util.ts";

export interface NodeStartParams extends Params {
  runs: number;
}

export const nodeStart: BenchCase<NodeStartParams> = {
  name: "node-start",
  kind: "baseline",
  title: "bare node start and exit",
  description:
    "`node <the agent bin's flags> -e 0`, run `runs` times one after the other: the median wall time from spawn to exit. " +
    "What any command on this runtime costs before it does anything.",
  sizes: (mode) => [{ runs: mode === "quick" ? 5 : 15 }],
  async run(params) {
    const ms = await timeCommand([process.execPath, ...agentNodeFlags(), "-e", "0"], params.runs);
    return { figures: [{ key: "start-ms", label: "node start to exit (median)", value: ms, unit: "ms", better: "lower" }] };
  },
};
