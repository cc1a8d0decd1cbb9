/** What commands get from the entry point: options, a runner, drivers, and where to print. */
import { readFile } from "node:fs/promises";
import { hostname as osHostname } from "node:os";
import { DeviceConfig } from "@tern/protocol";
import type { WanWatch } from "../daemon/agent.ts";
import type { Driver } from "../drivers/driver.ts";
import { AgentError, formatIssues } from "../errors.ts";
import type { CliOptions } from "../options.ts";
import { type AgentPaths, agentPaths } from "../paths.ts";
import type { Runner } from "../runner.ts";
import type { HealthSource, TunnelQualitySource } from "../status/index.ts";

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}

export interface CliDeps {
  options: CliOptions;
  runner: Runner;
  drivers: Driver[];
  io: CliIO;
  health?: HealthSource | null;
  tunnels?: TunnelQualitySource;
  /** `run`: the kernel's WAN carrier/address events. */
  wans?: WanWatch;
  /** `run` resolves when this aborts (SIGTERM/SIGINT in cli.ts). */
  stopSignal?: AbortSignal;
  /** How this process was started (cli.ts): what an upgrade needs to start the guard and the new version. */
  launch?: LaunchInfo;
}

/** The process's own start, for agent upgrades (upgrade/receiver.ts). */
export interface LaunchInfo {
  /** node and its flags (process.execPath, process.execArgv). */
  node: string[];
  /** The launcher (bin/tern-agent) this process was started through. */
  launcher: string;
  /** The arguments after the launcher. */
  args: string[];
  cwd: string;
  /** A service manager restarts the agent when it exits (TERN_AGENT_SUPERVISOR=systemd, set by the unit). */
  serviceManaged: boolean;
}

export function pathsOf(options: CliOptions): AgentPaths {
  return agentPaths(options.stateDir, options.runDir);
}

export function hostnameOf(options: CliOptions): string {
  return options.hostname ?? osHostname();
}

/** Reads and validates a config file; INVALID_CONFIG names the file and the fields. */
export async function readConfigFile(path: string | undefined): Promise<DeviceConfig> {
  if (!path) throw new AgentError("USAGE", "give the config file: tern-agent plan|apply CONFIG.json");
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new AgentError("USAGE", `cannot read ${path}: ${err.code ?? err.message}`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new AgentError("INVALID_CONFIG", `${path} is not JSON: ${(err as Error).message}`);
  }
  const parsed = DeviceConfig.safeParse(json);
  if (!parsed.success) throw new AgentError("INVALID_CONFIG", `${path}: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Replaces secret values (PSKs, passwords, tokens, SIM PINs, WPA passphrases) in JSON-like data. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      /^(psk|password|deviceToken|token|secret|pin|passphrase)$/i.test(k) && typeof v === "string" && v !== ""
        ? "<redacted>"
        : redact(v),
    ]),
  );
}
