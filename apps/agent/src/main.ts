/**
 * The command dispatcher, separate from the process entry (cli.ts) so tests
 * run commands in-process with a fake runner and captured output.
 */
import { apply } from "./commands/apply.ts";
import type { CliDeps, CliIO } from "./commands/deps.ts";
import { dump } from "./commands/dump.ts";
import { plan } from "./commands/plan.ts";
import { register } from "./commands/register.ts";
import { run } from "./commands/run.ts";
import { status } from "./commands/status.ts";
import type { Driver } from "./drivers/driver.ts";
import { createDrivers } from "./drivers/registry.ts";
import { AgentError, describeError } from "./errors.ts";
import { parseCli, USAGE } from "./options.ts";
import { ExecRunner, type Runner } from "./runner.ts";
import type { HealthSource, TunnelQualitySource } from "./status/index.ts";
import { AGENT_VERSION } from "./version.ts";

export interface MainDeps {
  env: Record<string, string | undefined>;
  io: CliIO;
  runner?: Runner;
  drivers?: Driver[];
  health?: HealthSource | null;
  tunnels?: TunnelQualitySource;
  stopSignal?: AbortSignal;
}

/** Exit codes: 0 ok, 1 failed, 2 usage or invalid input, 3 not running (status). */
export async function main(argv: string[], deps: MainDeps): Promise<number> {
  try {
    const options = parseCli(argv, deps.env);
    if (options.command === "help") {
      deps.io.out(USAGE);
      return 0;
    }
    if (options.command === "version") {
      deps.io.out(`${AGENT_VERSION}\n`);
      return 0;
    }
    const cli: CliDeps = {
      options,
      runner: deps.runner ?? new ExecRunner(),
      drivers: deps.drivers ?? createDrivers(),
      io: deps.io,
      ...(deps.health !== undefined ? { health: deps.health } : {}),
      ...(deps.tunnels ? { tunnels: deps.tunnels } : {}),
      ...(deps.stopSignal ? { stopSignal: deps.stopSignal } : {}),
    };
    switch (options.command) {
      case "register":
        return await register(cli);
      case "run":
        return await run(cli);
      case "status":
        return await status(cli);
      case "plan":
        return await plan(cli);
      case "apply":
        return await apply(cli);
      case "dump":
        return await dump(cli);
    }
  } catch (err) {
    deps.io.err(`tern-agent: ${describeError(err)}\n`);
    return err instanceof AgentError && ["USAGE", "INVALID_CONFIG", "HASH_MISMATCH"].includes(err.code) ? 2 : 1;
  }
}
