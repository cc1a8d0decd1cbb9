/**
 * Command-line options and their environment variables, parsed once with zod
 * (only cli.ts hands process.env in). A flag wins over its variable.
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import * as z from "zod";
import type { DaemonMode } from "./drivers/driver.ts";
import { AgentError, formatIssues } from "./errors.ts";
import { LOG_LEVELS, type LogLevel } from "./log-levels.ts";

export const COMMANDS = ["register", "enroll", "run", "rekey", "status", "plan", "apply", "dump", "help", "version"] as const;
export type Command = (typeof COMMANDS)[number];

/** Options every command accepts: flag, variable, default. */
export const COMMON_OPTIONS = {
  "state-dir": { env: "TERN_AGENT_STATE_DIR", help: "persistent state (default /var/lib/tern-agent)" },
  "run-dir": { env: "TERN_AGENT_RUN_DIR", help: "runtime files (default /run/tern-agent; <state-dir>/run in standalone mode)" },
  mode: { env: "TERN_AGENT_MODE", help: "system | standalone (default system)" },
  "log-level": { env: "TERN_AGENT_LOG_LEVEL", help: `${LOG_LEVELS.join(" | ")} (default info)` },
  "status-interval-ms": {
    env: "TERN_AGENT_STATUS_INTERVAL_MS",
    help: "status push interval until the server says otherwise (default 5000)",
  },
  "metrics-port": { env: "TERN_AGENT_METRICS_PORT", help: "Prometheus port, 0 = off (default 9464)" },
  "metrics-host": { env: "TERN_AGENT_METRICS_HOST", help: "Prometheus address (default 127.0.0.1)" },
  hostname: { env: "TERN_AGENT_HOSTNAME", help: "hostname to report (default: the system's)" },
  "ui-port": { env: "TERN_AGENT_UI_PORT", help: "troubleshooting page port, 0 = off (default 8088)" },
  "ui-host": { env: "TERN_AGENT_UI_HOST", help: "troubleshooting page address: 127.0.0.1 or a LAN address (default 127.0.0.1)" },
  "upgrade-keys": {
    env: "TERN_AGENT_UPGRADE_KEYS",
    help: "Ed25519 public keys (base64, comma separated) agent upgrades must be signed with (default none: upgrades refused)",
  },
} as const;

/** Commands that talk to the server (and so take --ca-file and --insecure). */
const connects = (command: Command) => command === "register" || command === "enroll" || command === "run" || command === "rekey";

/** Options only some commands take. */
const COMMAND_OPTIONS: Record<string, readonly Command[]> = {
  server: ["register", "enroll"],
  token: ["register", "enroll"],
  "no-start": ["enroll"],
  "ca-file": ["register", "enroll", "run", "rekey"],
  insecure: ["register", "enroll", "run", "rekey"],
  json: ["status", "plan", "apply"],
  "show-secrets": ["plan"],
  dest: ["dump"],
  "include-secrets": ["dump"],
};

const Options = z.object({
  stateDir: z.string().min(1).default("/var/lib/tern-agent"),
  runDir: z.string().min(1).optional(),
  mode: z.enum(["system", "standalone"]).default("system"),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  statusIntervalMs: z.coerce.number().int().min(100).max(300_000).default(5000),
  metricsPort: z.coerce.number().int().min(0).max(65535).default(9464),
  metricsHost: z.string().min(1).default("127.0.0.1"),
  hostname: z.string().min(1).max(253).optional(),
  uiPort: z.coerce.number().int().min(0).max(65535).default(8088),
  uiHost: z.string().min(1).default("127.0.0.1"),
  upgradeKeys: z.string().max(10_000).optional(),
});

export interface CliOptions {
  command: Command;
  args: string[];
  stateDir: string;
  runDir: string;
  mode: DaemonMode;
  logLevel: LogLevel;
  statusIntervalMs: number;
  metricsPort: number;
  metricsHost: string;
  hostname: string | undefined;
  /** 0: the troubleshooting page is off. */
  uiPort: number;
  uiHost: string;
  /** `upgrade-keys`: the operator's package signing keys, as given (upgrade/trust.ts parses them); none: no upgrades. */
  upgradeKeys: string | undefined;
  server: string | undefined;
  token: string | undefined;
  /** The settings file named by --config or TERN_AGENT_CONFIG (settings-file.ts), if any. */
  config: string | undefined;
  /** enroll: register only, do not enable and start the service. */
  noStart: boolean;
  /** `--ca-file` / TERN_AGENT_CA_FILE: the CA the server's certificate must chain to (pinned). */
  caFile: string | undefined;
  /** `--insecure` / TERN_AGENT_INSECURE=1: allow http/ws to a server that is not on this host. */
  insecure: boolean;
  json: boolean;
  showSecrets: boolean;
  includeSecrets: boolean;
  dest: string | undefined;
}

export function parseCli(argv: string[], env: Record<string, string | undefined>): CliOptions {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(Object.keys(COMMON_OPTIONS).map((k) => [k, { type: "string" as const }])),
        server: { type: "string" },
        token: { type: "string" },
        config: { type: "string" },
        "no-start": { type: "boolean" },
        "ca-file": { type: "string" },
        insecure: { type: "boolean" },
        dest: { type: "string" },
        json: { type: "boolean" },
        "show-secrets": { type: "boolean" },
        "include-secrets": { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
    });
  } catch (err) {
    throw new AgentError("USAGE", (err as Error).message);
  }
  const { values, positionals } = parsed;
  const first = positionals[0];
  const command: Command = values.help ? "help" : values.version ? "version" : ((first ?? "help") as Command);
  if (!COMMANDS.includes(command)) throw new AgentError("USAGE", `unknown command ${JSON.stringify(first)}; see tern-agent help`);
  for (const [flag, commands] of Object.entries(COMMAND_OPTIONS))
    if (values[flag] !== undefined && !commands.includes(command))
      throw new AgentError("USAGE", `--${flag} is an option of ${commands.join(", ")}, not of ${command}`);

  const pick = (flag: keyof typeof COMMON_OPTIONS) => (values[flag] as string | undefined) ?? env[COMMON_OPTIONS[flag].env];
  const common = Options.safeParse({
    stateDir: pick("state-dir"),
    runDir: pick("run-dir"),
    mode: pick("mode"),
    logLevel: pick("log-level"),
    statusIntervalMs: pick("status-interval-ms"),
    metricsPort: pick("metrics-port"),
    metricsHost: pick("metrics-host"),
    hostname: pick("hostname"),
    uiPort: pick("ui-port"),
    uiHost: pick("ui-host"),
    upgradeKeys: pick("upgrade-keys"),
  });
  if (!common.success) throw new AgentError("USAGE", formatIssues(common.error.issues));
  const o = common.data;
  return {
    command,
    args: positionals.slice(1),
    ...o,
    upgradeKeys: o.upgradeKeys,
    runDir: o.runDir ?? (o.mode === "standalone" ? join(o.stateDir, "run") : "/run/tern-agent"),
    hostname: o.hostname,
    server: values.server as string | undefined,
    token: values.token as string | undefined,
    config: (values.config as string | undefined) ?? env.TERN_AGENT_CONFIG,
    noStart: values["no-start"] === true,
    caFile: (values["ca-file"] as string | undefined) ?? (connects(command) ? env.TERN_AGENT_CA_FILE || undefined : undefined),
    insecure: values.insecure === true || (connects(command) && /^(1|true|yes)$/i.test(env.TERN_AGENT_INSECURE ?? "")),
    json: values.json === true,
    showSecrets: values["show-secrets"] === true,
    includeSecrets: values["include-secrets"] === true,
    dest: values.dest as string | undefined,
  };
}

export const USAGE = `Usage: tern-agent <command> [options]

Commands:
  register --server URL --token TOKEN [--ca-file PATH] [--insecure]
                                        register this router with a Tern server: makes the device key
                                        (<state-dir>/device-key.pem, 0600) and stores the device token
  enroll --server URL --token TOKEN [--ca-file PATH] [--insecure] [--no-start]
                                        register, then enable and start the tern-agent service (systemd)
  run [--ca-file PATH] [--insecure]     run the agent: restore the last good config, connect, apply, report
  rekey [--ca-file PATH] [--insecure]   replace the device key (the server must hold the old one)
  status [--json]                       connection, applied config, drivers, interfaces and tunnels
  plan CONFIG.json [--json] [--show-secrets]
                                        print the files and commands the drivers would apply (no root needed)
  apply CONFIG.json [--json]            apply a config locally without a server (labs, recovery)
  dump [--dest DIR] [--include-secrets] collect logs, configs and daemon state into one .tar.gz
                                        (default destination <state-dir>/dumps)

Server connection (register, enroll, run, rekey; register stores them for run):
  --ca-file PATH         TERN_AGENT_CA_FILE             trust only this CA (PEM) for the server's certificate
                                                        (default: the system's trust store)
  --insecure             TERN_AGENT_INSECURE=1          allow http:// to a server that is not on this host

Options (flag, or environment variable, or the same name in the settings file):
${Object.entries(COMMON_OPTIONS)
  .map(([flag, o]) => `  --${flag.padEnd(20)} ${o.env.padEnd(30)} ${o.help}`)
  .join("\n")}
  --config FILE            TERN_AGENT_CONFIG              settings file (YAML; default /etc/tern/agent.yaml in system mode, if present)
`;
