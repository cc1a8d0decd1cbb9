/**
 * Runs the agent's network parts inside a namespace for tests: started as
 * `ip netns exec NS node --import tsx test/support/ns-agent.ts`, it reads one
 * JSON command per line on stdin and answers one JSON line per command on
 * stdout. Sockets (the UDP probes) must live in the router's namespace, which
 * is why this is a process and not an in-test object.
 */
import { createInterface } from "node:readline";
import type { DeviceConfig } from "@tern/protocol";
import type { DriverContext } from "../../src/drivers/driver.ts";
import { PolicyDriver } from "../../src/drivers/policy/index.ts";
import { TunnelProber } from "../../src/probes/index.ts";
import { ExecRunner } from "../../src/runner.ts";

const port = Number(process.env.TERN_PROBE_PORT ?? 7655);
const prober = new TunnelProber({ port });
const events: { at: number; reason: string }[] = [];
const t0 = performance.now();
const ctx: DriverContext = {
  runner: new ExecRunner(),
  mode: "standalone",
  stateDir: process.env.TERN_STATE_DIR ?? "/tmp",
  runDir: process.env.TERN_RUN_DIR ?? "/tmp",
  log: { debug() {}, info() {}, warn() {}, error() {} },
  notify: (reason) => events.push({ at: Math.round(performance.now() - t0), reason }),
};
const policy = new PolicyDriver({ quality: prober });

type Command = { id: number; cmd: string; config?: DeviceConfig };

async function handle(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case "configure":
      prober.configure(c.config!);
      return null;
    case "report":
      return { tunnels: prober.report(), details: prober.targetDetails(), at: Math.round(performance.now() - t0) };
    case "policy-apply":
      return policy.apply(c.config!, ctx);
    case "policy-state":
      return { selections: policy.selections(), events, at: Math.round(performance.now() - t0) };
    case "stop":
      await policy.stop();
      prober.stop();
      setTimeout(() => process.exit(0), 10);
      return null;
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const c = JSON.parse(line) as Command;
  handle(c).then(
    (result) => process.stdout.write(`${JSON.stringify({ id: c.id, ok: true, result })}\n`),
    (err: unknown) => process.stdout.write(`${JSON.stringify({ id: c.id, ok: false, error: String(err) })}\n`),
  );
});
rl.on("close", () => process.exit(0));
