/** Public types of the device simulator. */
import type { DriverResult } from "@tern/protocol";
import type { AdminCredentials } from "./approve.ts";

/** One tunnel's figures as a device reports them. */
export interface TunnelSample {
  up: boolean;
  /** Percent, 0–100. */
  loss: number;
  /** Milliseconds. */
  rtt: number;
  /** Milliseconds. */
  jitter: number;
  /** The window and raw probe counts an agent reports with the figures (omitted: 30 samples, no counts, as earlier agents). */
  counts?: { samples: number; windowMs: number; sent: number; received: number };
}

/** Figures as a function of the tunnel and of the time since they were set. */
export type TunnelMetricsFn = (tunnelId: string, elapsedMs: number) => Partial<TunnelSample>;

/** Figures that change over time: each step holds from its `atMs` (since set) until the next one. */
export interface TunnelMetricsScript {
  steps: { atMs: number; metrics: Partial<TunnelSample> }[];
  /** Start again from the first step after the last one has held for `loopMs`. */
  loopMs?: number;
}

/** What `setTunnelMetrics` accepts: fixed figures, a script over time or a function. */
export type TunnelMetricsInput = Partial<TunnelSample> | TunnelMetricsScript | TunnelMetricsFn;

/** How a simulated device answers `apply`. */
export interface ApplyBehaviour {
  /** Wait this long before answering (the device reports `applying: true` meanwhile). */
  delayMs: number;
  /** Fail this driver: the device rolls back and reports the previous hash. */
  failDriver: string | null;
  /** Never answer (for job time-out tests); the config is still recorded as received. */
  neverAnswer: boolean;
  /** Report the requested hash as applied in later status messages even when not answering. */
  applySilently: boolean;
}

export const DEFAULT_APPLY: ApplyBehaviour = { delayMs: 0, failDriver: null, neverAnswer: false, applySilently: false };

/** A public address override for one interface (by index in the device's interface list). */
export interface PublicAddress {
  publicIp: string;
  publicPort: number | null;
}

export type SimEventType =
  | "registered"
  | "connected"
  | "welcome"
  | "apply"
  | "apply-result"
  | "request"
  | "response"
  | "status"
  | "server-error"
  | "closed"
  | "failed";

/** Something that happened to one simulated device; `at` is `performance.now()`. */
export interface SimEvent {
  device: number;
  type: SimEventType;
  at: number;
  /** apply/apply-result: the apply id; request/response: the request id; closed: the close code. */
  id?: string;
  code?: number;
  reason?: string;
  hash?: string | null;
  ok?: boolean;
  drivers?: DriverResult[];
}

/** Everything `Simulator.start` takes. Only `server`, `token` and `count` are required. */
export interface SimulatorOptions {
  /** Base URL of the management server, e.g. `http://127.0.0.1:3000`. */
  server: string;
  /** Registration token for `POST /api/connect/register`. */
  token: string;
  count: number;
  /** Index of the first device: lets several processes simulate disjoint parts of one fleet. */
  startIndex: number;
  /** Machine ids are `<prefix>-<index>`; keep it stable to re-register the same devices. */
  machinePrefix: string;
  /**
   * Seed of the devices' Ed25519 keys (device-key.ts); default `sim:<machinePrefix>`, so the same
   * machine ids prove the same keys across runs. Another seed is another set of machines (a takeover
   * attempt with the same machine ids).
   */
  identitySeed: string;
  agentVersion: string;
  protocolVersion: number;
  /** Status period; null = the `statusIntervalMs` the server sends in `welcome`. */
  statusIntervalMs: number | null;
  /** Registrations and websocket handshakes in flight at once. */
  concurrency: number;
  /** Tunnel ids reported before any config is applied (load tests against servers that never send `apply`). */
  syntheticTunnels: number;
  /** Figures for every tunnel of every device until a device overrides them. */
  metrics: TunnelMetricsInput;
  apply: ApplyBehaviour;
  /** Reconnect after the server closes (like the agent), with exponential back-off from `reconnectMinMs`. */
  reconnect: boolean;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Connect the websockets in `start`; false = only register, call `connectAll()` later. */
  connect: boolean;
  /** Reject `start` when a device fails to register or connect; false = keep going and report it. */
  failFast: boolean;
  /**
   * An administrator of the devices' organization: after registering, the fleet approves its devices
   * not approved yet with one bulk approval call (POST /api/devices/approve). null: someone else approves.
   */
  admin: AdminCredentials | null;
  /**
   * How long `connect` keeps retrying a device the server refuses as not approved yet (HTTP 403 on the
   * websocket upgrade, or close 4003), with back-off from `reconnectMinMs` to `reconnectMaxMs`. 0: fail at once. Default: 120 s with `admin`, else 0.
   */
  approvalWaitMs: number;
  /** Called on every event (progress printing, recording); keep it cheap. */
  onEvent: ((event: SimEvent) => void) | null;
}

export const DEFAULT_METRICS: TunnelSample = { up: true, loss: 0, rtt: 20, jitter: 1 };
