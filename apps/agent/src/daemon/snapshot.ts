/**
 * What the running agent knows about itself, in one JSON-able object: written
 * to `<runDir>/status.json` on every status tick for `tern-agent status`, and
 * served to the local troubleshooting page through `AgentView`.
 */
import type { RequestMethod, Status } from "@tern/protocol";
import type { DaemonMode, DriverDetails } from "../drivers/driver.ts";
import type { DriverState, PendingRecord, ReconcileOutcome } from "../reconcile/index.ts";
import type { TunnelDetail } from "../status/tunnel-quality.ts";

export interface RecentError {
  at: string;
  /** "apply", "control", a driver name, "tunnels", "health" … */
  source: string;
  message: string;
  /** How many times in a row it happened (repeats update `at` instead of piling up). */
  count: number;
}

export interface ConnectionSnapshot {
  /** "disabled": not registered, running without a server. */
  state: "disabled" | "connecting" | "connected" | "disconnected" | "stopped";
  since: string | null;
  server: string | null;
  url: string | null;
  lastError: string | null;
  reconnects: number;
  serverVersion: string | null;
  statusIntervalMs: number;
}

export interface AgentSnapshot {
  agentVersion: string;
  pid: number;
  mode: DaemonMode;
  stateDir: string;
  runDir: string;
  machineId: string;
  hostname: string;
  deviceId: string | null;
  startedAt: string;
  updatedAt: string;
  connection: ConnectionSnapshot;
  appliedHash: string | null;
  applying: boolean;
  /** An apply a previous run did not finish (found at start; cleared by the next successful apply). */
  interrupted: PendingRecord | null;
  lastApply: ReconcileOutcome | null;
  drivers: Record<string, DriverState>;
  /** Local details of drivers that have them (`ikev2`: IKE/CHILD SAs; `policy`: the link each rule uses). */
  driverDetails: Record<string, DriverDetails>;
  /** The last status message composed (interfaces, tunnels, BGP, VRRP, health). */
  status: Status | null;
  /** Smoothed RTT and probe target per tunnel, from the prober. */
  tunnelDetails: TunnelDetail[];
  /** Newest first, at most 50. */
  recentErrors: RecentError[];
  metrics: { host: string; port: number } | null;
  /** The troubleshooting page, when served; its password is in `secretFile`. */
  ui: { url: string; secretFile: string } | null;
  /** The server address and port management QoS marks (from the control link's connection). */
  controlServer: { address: string; port: number } | null;
}

/** What the local troubleshooting page (src/ui/) reads and can ask: the same data and requests the server gets. */
export interface AgentView {
  snapshot(): AgentSnapshot;
  /** A protocol request (REQUESTS: interface-status, bgp-status, tunnel-quality, ping, traceroute); throws AgentError. */
  request(method: RequestMethod, params: unknown): Promise<unknown>;
  /** Composes and pushes a fresh status now; resolves with it. */
  refresh(): Promise<Status>;
}
