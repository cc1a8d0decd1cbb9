/**
 * The driver contract. One driver per Linux subsystem; the reconcile loop
 * calls them in DRIVER_ORDER. Like tailscale's router `Set(config)`:
 * applying the same config twice changes nothing (no command that mutates,
 * no daemon reload); a config whose section is empty tears down what the
 * driver owns; a driver touches only what it owns (its nft table, its route
 * protocol/tables/rule priorities, its config directories and daemons).
 */
import type { AgentHealingReport, DeviceConfig, Status } from "@tern/protocol";
import type { WanChange } from "../kernel-events/types.ts";
import type { Runner } from "../runner.ts";

/** `lte` and `wifi` come right after `links` (the interfaces exist and are up), `wifi` before `dhcp` (a restarted AP resets its interface, see wifi/driver.ts). */
export const DRIVER_ORDER = ["links", "lte", "wifi", "firewall", "ikev2", "bgp", "vrrp", "dhcp", "policy", "qos"] as const;
export type DriverName = (typeof DRIVER_ORDER)[number];

/**
 * `system`: the distro's services and paths (a real router).
 * `standalone`: the agent starts each daemon itself with per-instance config,
 * pid and socket paths under `runDir`, so many agents share one host in
 * network namespaces.
 */
export type DaemonMode = "system" | "standalone";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface DriverContext {
  runner: Runner;
  mode: DaemonMode;
  /** Persistent agent state (last good config, device token); survives reboots. */
  stateDir: string;
  /** Per-instance runtime files: rendered daemon configs, pid files, sockets. `runDir/<driver>/…`. */
  runDir: string;
  log: Logger;
  /** Drivers call this when observed state changed in a way worth reporting now (e.g. a VRRP transition). */
  notify(reason: string): void;
  /**
   * The management server the control link connects to (resolved IPv4 and TCP
   * port), so management QoS can mark that connection. Unset: only probes,
   * IKE and BGP are marked.
   */
  controlServer?: { address: string; port: number } | null;
  /**
   * Drivers call this when the system changed under them so that the current
   * config must be applied again (e.g. a new DHCP lease on a WAN). The
   * reconcile loop coalesces requests and runs them after any apply in flight.
   * Absent in one-shot commands (`plan`, `apply`).
   */
  requestReconcile?(reason: string): void;
}

/** The parts of a `status` message a driver can observe. */
export type StatusPart = Partial<Pick<Status, "interfaces" | "bgp" | "vrrp">>;

/** A file a driver renders: path relative to `runDir/<driver>/` (standalone) or absolute (system). */
export interface RenderedFile {
  path: string;
  content: string;
  /** 0o600 for files that hold secrets. */
  mode: number;
}

/** One named piece of a troubleshooting dump (`tern-agent dump`): command output or a daemon's state. */
export interface DumpItem {
  /** File name inside the driver's folder of the archive, e.g. "swanctl-list-sas.txt". */
  name: string;
  content: string;
}

/**
 * Local-only state of a driver beyond the protocol's `status` (IKE/CHILD SA
 * details, which link a policy rule uses now), for `tern-agent status` and
 * the troubleshooting page.
 */
export interface DriverDetails {
  /** One line per item, for people. */
  lines: string[];
  /** The same as data, for `tern-agent status --json`. */
  data: unknown;
}

export interface ApplyOutcome {
  /** True when anything on the system was changed. */
  changed: boolean;
}

export interface Driver {
  readonly name: DriverName;
  /**
   * Brings the system to the driver's section of `config`: observe, diff and
   * change only the difference. Throws (a CommandError or Error with a clear
   * message) when the system cannot be brought there.
   */
  apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome>;
  /** The files and commands `apply` would produce from scratch, for `tern-agent plan` (pure, no root). */
  plan(
    config: DeviceConfig,
    ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">,
  ): { files: RenderedFile[]; commands: string[][] };
  /** Current state of what the driver manages, for `status` messages and on-demand reads. */
  observe?(config: DeviceConfig, ctx: DriverContext): Promise<StatusPart>;
  /** Local-only state for `tern-agent status` and the page; cheap, read every few seconds while the agent runs. */
  inspect?(config: DeviceConfig, ctx: DriverContext): Promise<DriverDetails>;
  /** Daemon state and command output for `tern-agent dump` (never throws; failures become text). */
  dump?(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]>;
  /**
   * Between applies, on every status tick: restarts what a daemon gave up on by itself (e.g. an IKE
   * initiation answered with an error). Returns what it restarted, for the log; never throws.
   */
  heal?(config: DeviceConfig, ctx: DriverContext): Promise<string[]>;
  /** What the driver healed by itself lately (docs/healing.md), sent with every status; drivers sharing a log return the same reports. */
  healingReports?(): AgentHealingReport[];
  /**
   * The kernel reported WAN interfaces whose carrier or address changed (the
   * agent's `ip monitor` watch, kernel-events/). Called at once, between or
   * during applies; drivers react only where it cannot wait for the next probe
   * or apply (move traffic, re-key tunnels). Never throws on a daemon error.
   */
  wanChanged?(changes: readonly WanChange[], config: DeviceConfig, ctx: DriverContext): Promise<void>;
  /** Releases watchers, timers and loops when the agent stops (leaves the system as it is). */
  close?(): void | Promise<void>;
}
