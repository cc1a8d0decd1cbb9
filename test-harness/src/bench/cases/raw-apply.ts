/**
 * Baseline of agent-convergence: the same configuration done by a plain
 * script of the commands the agent's drivers render (agent/raw-script.ts),
 * in a fresh lab of the same shape, with no agent.
 */
import { oneFieldChange, routerAConfig, routerBConfig } from "../agent/configs.ts";
import { buildRouterLab, DAEMON_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import { planOf, rawEnv, runScript, shellScript, writePlanFiles } from "../agent/raw-script.ts";
import { tunnelAnswers } from "../agent/tunnel-wait.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";

export interface ConvergenceParams extends Params {
  /** One-field changes timed (alternating back and forth); the figure is their median. */
  changes: number;
}

export const convergenceSizes = (mode: "quick" | "full"): ConvergenceParams[] => [{ changes: mode === "quick" ? 3 : 10 }];

const DEVICE = { a: "00000000-0000-4000-8000-00000000a001", b: "00000000-0000-4000-8000-00000000b001" };

export const rawApply: BenchCase<ConvergenceParams> = {
  name: "raw-apply",
  kind: "baseline",
  title: "the agent's rendered commands run by a plain script",
  description:
    "Two lab routers like agent-convergence's. `tern-agent plan --json` renders each router's full config (pure); its " +
    "files are written, then one `sh` in the router's namespace runs its commands in order (ip, nft, start-stop-daemon " +
    "for charon/keepalived/kea, zebra/bgpd, swanctl --load-all, tc …), retrying a command only while the daemon it needs " +
    "is still starting. Router B first (untimed), then router A timed by the script itself, then until a ping crosses the " +
    "tunnel; one-field change: `nft -f` of the changed firewall ruleset (what that change needs), median of `changes`.",
  sizes: convergenceSizes,
  async run(params) {
    requireLab(DAEMON_COMMANDS);
    let lab: RouterLab | undefined;
    try {
      lab = await buildRouterLab("braw");
      const configA = routerAConfig(DEVICE.a, lab.a);
      const planA = await planOf(lab.a, configA);
      const planB = await planOf(lab.b, routerBConfig(DEVICE.b, lab.b));
      await writePlanFiles(lab.b, planB);
      await runScript(
        lab.b,
        shellScript(
          planB.flatMap((d) => d.commands),
          rawEnv(lab.b),
        ),
        "router-b",
      );
      await writePlanFiles(lab.a, planA);
      const t0 = performance.now();
      const fullMs = await runScript(
        lab.a,
        shellScript(
          planA.flatMap((d) => d.commands),
          rawEnv(lab.a),
        ),
        "router-a",
      );
      const tunnelMs = (await tunnelAnswers(lab.a)) - t0;

      // The firewall ruleset with the changed field and without, applied back and forth.
      const changed = (await planOf(lab.a, oneFieldChange(configA))).find((d) => d.driver === "firewall")!;
      const original = planA.find((d) => d.driver === "firewall")!;
      const changes: number[] = [];
      for (let i = 0; i < params.changes; i++) {
        const fw = i % 2 === 0 ? changed : original;
        await writePlanFiles(lab.a, [fw]);
        changes.push(await runScript(lab.a, shellScript(fw.commands), "one-field"));
      }
      const perDriver: Record<string, number> = {};
      for (const d of planA) perDriver[d.driver] = d.commands.length;
      return {
        figures: [
          { key: "full-ms", label: "full config: script start → last command done", value: fullMs, unit: "ms", better: "lower" },
          {
            key: "tunnel-ms",
            label: "full config: script start → ping over the tunnel",
            value: tunnelMs,
            unit: "ms",
            better: "lower",
          },
          {
            key: "one-field-ms",
            label: "one-field change: nft -f (median)",
            value: summarize(changes).p50,
            unit: "ms",
            better: "lower",
          },
        ],
        details: { commandsPerDriver: perDriver, oneFieldMs: changes },
      };
    } finally {
      await lab?.cleanup();
    }
  },
};
