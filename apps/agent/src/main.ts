/**
 * The command dispatcher, separate from the process entry (cli.ts) so tests
 * run commands in-process with a fake runner and captured output.
 */
import type { CliDeps, CliIO, LaunchInfo } from "./commands/deps.ts";
import type { Driver } from "./drivers/driver.ts";
import { AgentError, describeError } from "./errors.ts";
import { parseCli, USAGE } from "./options.ts";
import type { Runner } from "./runner.ts";
import { DEFAULT_SETTINGS_FILE, settingsFileEnv } from "./settings-file.ts";
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
  /** How the process was started (cli.ts); absent in tests: upgrades are refused. */
  launch?: LaunchInfo;
  /** enroll: whether systemd manages this machine (default: /run/systemd/system exists); tests answer it. */
  systemdBooted?: () => Promise<boolean>;
}

/** Exit codes: 0 ok, 1 failed, 2 usage or invalid input, 3 not running (status). */
export async function main(argv: string[], deps: MainDeps): Promise<number> {
  try {
    const flagsAndEnv = parseCli(argv, deps.env);
    if (flagsAndEnv.command === "help") {
      deps.io.out(USAGE);
      return 0;
    }
    if (flagsAndEnv.command === "version") {
      deps.io.out(`${AGENT_VERSION}\n`);
      return 0;
    }
    // The settings file sits under the environment and the flags: parse again with it layered below.
    const file = flagsAndEnv.config ?? (flagsAndEnv.mode === "system" ? DEFAULT_SETTINGS_FILE : undefined);
    const fileEnv = await settingsFileEnv(file, flagsAndEnv.config !== undefined);
    const options = Object.keys(fileEnv).length > 0 ? parseCli(argv, { ...fileEnv, ...deps.env }) : flagsAndEnv;
    // Loaded here, not at the top: `--help` and `--version` parse only the dispatcher (no drivers, probes, protocol).
    const [{ createDrivers }, { TunnelProber }, { ExecRunner, ExecSpawner }, { WanWatcher }] = await Promise.all([
      import("./drivers/registry.ts"),
      import("./probes/prober.ts"),
      import("./runner.ts"),
      import("./kernel-events/wan-watcher.ts"),
    ]);
    // The daemon measures its tunnels; the policy driver reads the same measurements.
    const prober = options.command === "run" && !deps.tunnels && !deps.drivers ? new TunnelProber() : null;
    const tunnels = deps.tunnels ?? prober;
    const runner = deps.runner ?? new ExecRunner();
    // The daemon also follows the kernel's WAN carrier and address changes (ip monitor), with the real drivers only.
    const wans = prober ? new WanWatcher({ runner, spawner: new ExecSpawner() }) : null;
    const cli: CliDeps = {
      options,
      runner,
      drivers: deps.drivers ?? createDrivers(prober ? { quality: prober } : {}),
      io: deps.io,
      ...(deps.health !== undefined ? { health: deps.health } : {}),
      ...(tunnels ? { tunnels } : {}),
      ...(wans ? { wans } : {}),
      ...(deps.stopSignal ? { stopSignal: deps.stopSignal } : {}),
      ...(deps.launch ? { launch: deps.launch } : {}),
    };
    // Each command loads only what it needs: `status` and `plan` start fast without ws and prom-client.
    switch (options.command) {
      case "register":
        return await (await import("./commands/register.ts")).register(cli);
      case "enroll":
        return await (await import("./commands/enroll.ts")).enroll(cli, deps.systemdBooted);
      case "run":
        return await (await import("./commands/run.ts")).run(cli);
      case "rekey":
        return await (await import("./commands/rekey.ts")).rekey(cli);
      case "status":
        return await (await import("./commands/status.ts")).status(cli);
      case "plan":
        return await (await import("./commands/plan.ts")).plan(cli);
      case "apply":
        return await (await import("./commands/apply.ts")).apply(cli);
      case "dump":
        return await (await import("./commands/dump.ts")).dump(cli);
      default:
        throw new AgentError("INTERNAL", `no handler for ${options.command}`);
    }
  } catch (err) {
    deps.io.err(`tern-agent: ${describeError(err)}\n`);
    return err instanceof AgentError && ["USAGE", "INVALID_CONFIG", "HASH_MISMATCH"].includes(err.code) ? 2 : 1;
  }
}
