/**
 * One simulated device: what the agent does on the wire, and nothing else.
 * State is kept to a few fields (identity and interfaces are derived from
 * the index, configs are reduced to the ids a status needs) so that 10,000
 * devices fit in one process; timers and listeners live in the fleet.
 */

import type { Agent } from "node:http";
import {
  type Apply,
  type Challenge,
  CLOSE_CODES,
  configHash,
  type DeviceConfig,
  type Hello,
  helloProofText,
  MAX_MESSAGE_BYTES,
  type RegisterResponse,
  type Request,
  ServerMessage,
  type Status,
  type TunnelReport,
  type UpgradeRefusal,
  upgradeRefusal,
  type VrrpRouterState,
} from "@tern/protocol";
import WebSocket from "ws";
import { SIM_DRIVERS, simulateApply } from "./apply.ts";
import { type SimKey, signText, simDeviceKey } from "./device-key.ts";
import { hostname, interfaceStates, machineId, type WanAddress } from "./identity.ts";
import { validateMetrics } from "./metrics.ts";
import { register, registerRequest } from "./register.ts";
import { answerRequest, bgpState } from "./requests.ts";
import { buildStatus, compactBgp, type SimBgp, tunnelReports } from "./status.ts";
import type { ApplyBehaviour, PublicAddress, SimEvent, SimEventType, SimulatorOptions, TunnelMetricsInput } from "./types.ts";

/** What a device needs from its fleet: options, shared defaults and the event bus. */
export interface FleetContext {
  readonly options: SimulatorOptions;
  readonly startedAt: number;
  fleetMetrics(): { input: TunnelMetricsInput; since: number };
  emit(event: SimEvent): void;
  waitFor(
    type: SimEventType | readonly SimEventType[],
    device: number | null,
    timeoutMs: number,
    filter?: (e: SimEvent) => boolean,
  ): Promise<SimEvent>;
  /** Tunnel ids reported before any config is applied (shared by every device). */
  readonly syntheticTunnelIds: readonly string[];
  /** The keep-alive agent registrations share. */
  registrationAgent(): Agent;
}

export type DeviceState = "new" | "registered" | "connecting" | "open" | "ready" | "closed";

/** Close codes after which reconnecting cannot help. */
const TERMINAL_CLOSES: ReadonlySet<number> = new Set([
  CLOSE_CODES.unauthenticated,
  CLOSE_CODES.protocolVersion,
  CLOSE_CODES.replaced,
  CLOSE_CODES.deviceDeleted,
]);

/** Status messages are skipped while this much is still unsent, so a slow server does not grow our memory. */
const MAX_BUFFERED = 256 * 1024;

/** The server refused the device as not approved yet: 403 on the upgrade (ws reports it as the reason of close 1006), or close 4003. */
function refusedAsNotApproved(e: SimEvent): boolean {
  return e.code === CLOSE_CODES.notApproved || /Unexpected server response: 403\b/.test(e.reason ?? "");
}

export class SimDevice {
  deviceId: string | null = null;
  approved = false;
  appliedHash: string | null = null;
  state: DeviceState = "new";
  /** Next time (performance.now()) a status is due; the fleet's scheduler reads it. */
  nextStatusAt = Number.POSITIVE_INFINITY;
  statusIntervalMs = 0;
  statusSent = 0;
  statusSkipped = 0;
  lastClose: { code: number; reason: string } | null = null;
  lastError: string | null = null;

  private token: string | null = null;
  /** The device key's public half, once derived (`key`). */
  private publicKey: string | undefined;
  private ws: WebSocket | null = null;
  private wantConnected = false;
  private attempts = 0;
  private applying = 0;
  private tunnelIds: readonly string[];
  private bgp: SimBgp | null = null;
  private vrrp: Status["vrrp"] | null = null;
  private metrics: TunnelMetricsInput | undefined;
  private metricsSince = 0;
  private perTunnel: Map<string, { input: TunnelMetricsInput; since: number }> | undefined;
  private publicAddress: PublicAddress | undefined;
  private wanAddress: WanAddress | undefined;
  private applyOverride: ApplyBehaviour | undefined;
  private frozen = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** The last upgrade was refused with a Retry-After (a busy server, 503/429): the next try waits that, as the agent's does. */
  private retryAfter: number | null = null;

  constructor(
    /** Global index (startIndex + position), the source of machine id and addresses. */
    readonly index: number,
    private readonly fleet: FleetContext,
  ) {
    this.tunnelIds = fleet.syntheticTunnelIds;
  }

  get machineId(): string {
    return machineId(this.fleet.options.machinePrefix, this.index);
  }

  get hostname(): string {
    return hostname(this.fleet.options.machinePrefix, this.index);
  }

  /** True between `welcome` and close. */
  get ready(): boolean {
    return this.state === "ready";
  }

  /** Tunnel ids the device reports: from the applied config, or the synthetic ones before any. */
  get tunnels(): readonly string[] {
    return this.tunnelIds;
  }

  /**
   * The device's Ed25519 key, derived from the fleet's identity seed (not stored: a few hundred bytes per device);
   * its public half is kept after the first derivation, which makes the next ones a tenth of the CPU (device-key.ts).
   */
  key(): SimKey {
    const key = simDeviceKey(this.fleet.options.identitySeed, this.index, this.publicKey);
    this.publicKey = key.publicKey;
    return key;
  }

  /** `POST /api/connect/register` with the fleet's registration token, signed by the device key. */
  async register(): Promise<void> {
    const o = this.fleet.options;
    const body = registerRequest(o.token, o.machinePrefix, this.index, o.agentVersion, this.key(), o.protocolVersion);
    const res = await register(o.server, body, this.fleet.registrationAgent());
    this.deviceId = res.deviceId;
    this.token = res.deviceToken;
    this.approved = res.isApproved;
    this.state = "registered";
    this.emit("registered", { id: res.deviceId, ok: res.isApproved });
  }

  /**
   * Takes credentials obtained another way instead of registering (a server
   * test that creates the device row itself); then `connect()` as usual.
   */
  useCredentials(res: RegisterResponse): void {
    this.deviceId = res.deviceId;
    this.token = res.deviceToken;
    this.approved = res.isApproved;
    if (this.state === "new") this.state = "registered";
  }

  /** Opens the websocket and resolves at `welcome`; rejects when it closes before. */
  async connect(): Promise<void> {
    if (this.token === null) throw new Error(`device ${this.index} is not registered`);
    this.wantConnected = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.state === "ready") return;
    const o = this.fleet.options;
    const deadline = performance.now() + o.approvalWaitMs;
    for (let attempt = 0; ; attempt++) {
      const outcome = this.fleet.waitFor(["welcome", "closed"], this.position, 60_000);
      if (this.ws === null) this.open();
      const e = await outcome;
      if (e.type !== "closed") return;
      const closedError = new Error(`device ${this.index} closed before welcome: ${e.code} ${e.reason ?? ""}`.trim());
      if (!refusedAsNotApproved(e) || !this.wantConnected) throw closedError;
      // Not approved yet (a fresh fleet an operator or approveAll() is approving): retry with back-off.
      const delay = Math.min(o.reconnectMaxMs, o.reconnectMinMs * 2 ** Math.min(attempt, 16)) * (0.8 + Math.random() * 0.4);
      if (performance.now() + delay > deadline) throw closedError;
      if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
      this.reconnectTimer = null;
      this.approved = false;
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (!this.wantConnected) throw closedError;
    }
  }

  /** Closes the websocket (code 1000) and stays away until `connect()`. */
  disconnect(): Promise<void> {
    this.wantConnected = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.ws;
    if (ws === null) return Promise.resolve();
    const done = this.fleet.waitFor("closed", this.position, 10_000).then(() => undefined);
    // A frozen socket would never read the server's close frame: cut it instead.
    if (this.frozen) {
      this.frozen = false;
      ws.terminate();
    } else ws.close(1000, "simulator disconnect");
    return done;
  }

  /** Drops the TCP connection without a close frame, as a crashed device or broken path would. */
  drop(): void {
    this.wantConnected = false;
    this.ws?.terminate();
  }

  /**
   * Stops reading from the socket and sending status: the connection stays
   * open but the device answers nothing, not even pings (server liveness tests).
   */
  freeze(): void {
    this.frozen = true;
    this.ws?.pause();
  }

  unfreeze(): void {
    this.frozen = false;
    this.ws?.resume();
  }

  /** Sends a status message now (also reschedules nothing: the periodic one stays on time). */
  sendStatus(): boolean {
    const ws = this.ws;
    if (ws === null || this.state !== "ready" || this.frozen) return false;
    if (ws.bufferedAmount > MAX_BUFFERED) {
      this.statusSkipped++;
      return false;
    }
    ws.send(JSON.stringify(this.status()));
    this.statusSent++;
    this.emit("status");
    return true;
  }

  /** The status message this device would send now. */
  status(): Status {
    const uptime = this.uptimeMs();
    return buildStatus({
      appliedHash: this.appliedHash,
      applying: this.applying > 0,
      tunnels: this.tunnelReports(),
      interfaces: interfaceStates(this.index, uptime, this.publicAddress, this.wanAddress),
      bgp: this.bgp === null ? null : bgpState(this.bgp, Math.floor(uptime / 1000)),
      vrrp: this.vrrp ?? [],
      uptimeSeconds: Math.floor(uptime / 1000),
    });
  }

  tunnelReports(): TunnelReport[] {
    const fleet = this.fleet.fleetMetrics();
    return tunnelReports(
      this.tunnelIds,
      {
        fleet: fleet.input,
        fleetSince: fleet.since,
        device: this.metrics,
        deviceSince: this.metricsSince,
        perTunnel: this.perTunnel,
      },
      performance.now(),
    );
  }

  /** Figures for all of this device's tunnels, or only `tunnelId`; scripts start counting now. */
  setTunnelMetrics(input: TunnelMetricsInput, tunnelId?: string): void {
    validateMetrics(input);
    const since = performance.now();
    if (tunnelId === undefined) {
      this.metrics = input;
      this.metricsSince = since;
      this.perTunnel = undefined;
    } else {
      this.perTunnel ??= new Map();
      this.perTunnel.set(tunnelId, { input, since });
    }
  }

  /** The WAN interface's public address; null goes back to the default. */
  setPublicAddress(address: PublicAddress | null): void {
    this.publicAddress = address ?? undefined;
  }

  /** The WAN interface's own address in later reports (a new lease); null goes back to the registered one. */
  setWanAddress(address: WanAddress | null): void {
    this.wanAddress = address ?? undefined;
  }

  setApplyBehaviour(behaviour: Partial<ApplyBehaviour> | null): void {
    if (behaviour === null) {
      this.applyOverride = undefined;
      return;
    }
    const merged = { ...(this.applyOverride ?? this.fleet.options.apply), ...behaviour };
    checkApplyBehaviour(merged);
    this.applyOverride = merged;
  }

  setVrrpState(groupId: string, state: VrrpRouterState): void {
    this.vrrp ??= [];
    const entry = this.vrrp.find((v) => v.groupId === groupId);
    const since = new Date().toISOString();
    if (entry) {
      entry.state = state;
      entry.since = since;
    } else this.vrrp.push({ groupId, state, since });
  }

  /** Resolves at this device's next event of `type` (after the call). */
  waitFor(type: SimEventType, options: { timeoutMs?: number; filter?: (e: SimEvent) => boolean } = {}): Promise<SimEvent> {
    return this.fleet.waitFor(type, this.position, options.timeoutMs ?? 10_000, options.filter);
  }

  /** Position in the fleet (0-based), the `device` of its events. */
  get position(): number {
    return this.index - this.fleet.options.startIndex;
  }

  private uptimeMs(): number {
    return performance.now() - this.fleet.startedAt;
  }

  private emit(type: SimEventType, fields: Omit<SimEvent, "device" | "type" | "at"> = {}): void {
    this.fleet.emit({ device: this.position, type, at: performance.now(), ...fields });
  }

  private open(): void {
    const o = this.fleet.options;
    const url = new URL("/api/connect/ws", o.server);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    this.state = "connecting";
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.token}` },
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: 30_000,
    });
    this.ws = ws;
    ws.on("open", () => {
      this.state = "open";
      this.emit("connected");
    });
    ws.on("message", (data, isBinary) => this.onMessage(isBinary ? null : data.toString()));
    this.retryAfter = null;
    let refused: UpgradeRefusal | null = null;
    ws.on("unexpected-response", (_req, res) => {
      refused = upgradeRefusal(res.statusCode ?? 0, res.headers["retry-after"]);
      this.retryAfter = refused.retryAfterMs;
      res.resume();
      ws.terminate();
    });
    ws.on("error", (err) => {
      this.lastError = refused?.error ?? err.message;
    });
    ws.on("close", (code, reason) => this.onClose(ws, code, reason.toString()));
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (this.ws !== ws) return;
    this.ws = null;
    this.state = "closed";
    this.nextStatusAt = Number.POSITIVE_INFINITY;
    this.lastClose = { code, reason: reason || this.lastError || "" };
    this.emit("closed", { code, reason: this.lastClose.reason });
    if (!this.wantConnected || !this.fleet.options.reconnect || TERMINAL_CLOSES.has(code)) return;
    const o = this.fleet.options;
    // The server said when to come back (busy admitting a reconnecting fleet): that, not the back-off.
    const told = this.retryAfter === null ? null : Math.min(o.reconnectMaxMs, this.retryAfter);
    const base = Math.min(o.reconnectMaxMs, o.reconnectMinMs * 2 ** Math.min(this.attempts, 16));
    if (told === null) this.attempts++;
    // ±20 % jitter so a restarted server is not hit by the whole fleet in the same millisecond.
    const delay = told ?? base * (0.8 + Math.random() * 0.4);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.wantConnected && this.ws === null) this.open();
    }, delay);
  }

  private send(message: object): void {
    // A result finishing after its link was lost (a server restart) has no link to go on: the next
    // hello reports the applied hash instead, as a real agent's does.
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(message));
  }

  private onMessage(text: string | null): void {
    let parsed: ReturnType<typeof ServerMessage.safeParse>;
    try {
      parsed = ServerMessage.safeParse(text === null ? null : JSON.parse(text));
    } catch {
      parsed = ServerMessage.safeParse(undefined);
    }
    if (!parsed.success) {
      const message = `invalid server message: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`;
      this.lastError = message;
      this.send({ type: "error", code: "bad-message", message });
      this.emit("failed", { reason: message });
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case "challenge":
        this.hello(msg);
        return;
      case "rekeyed":
        return;
      case "welcome":
        this.onWelcome(msg.deviceId, msg.statusIntervalMs);
        return;
      case "apply":
        this.onApply(msg);
        return;
      case "request":
        this.onRequest(msg);
        return;
      case "error":
        this.emit("server-error", { id: msg.code, reason: msg.message });
        return;
    }
  }

  /** The hello, signed with the device key over the server's challenge (protocol 2). */
  private hello(challenge: Challenge): void {
    const o = this.fleet.options;
    const url = this.ws?.url ?? "";
    const key = this.key();
    const hello: Hello = {
      type: "hello",
      protocolVersion: o.protocolVersion,
      agentVersion: o.agentVersion,
      machineId: this.machineId,
      hostname: this.hostname,
      appliedHash: this.appliedHash,
      proof: {
        publicKey: key.publicKey,
        url,
        signature: signText(
          key.privateKey,
          helloProofText({ nonce: challenge.nonce, deviceId: this.deviceId ?? "", machineId: this.machineId, url }),
        ),
      },
    };
    this.send(hello);
  }

  private onWelcome(deviceId: string, intervalMs: number): void {
    this.state = "ready";
    this.attempts = 0;
    this.statusIntervalMs = this.fleet.options.statusIntervalMs ?? intervalMs;
    // A random phase spreads the fleet's status messages evenly over the period.
    this.nextStatusAt = performance.now() + Math.random() * this.statusIntervalMs;
    this.emit("welcome", { id: deviceId });
  }

  private onApply(msg: Apply): void {
    const behaviour = this.applyOverride ?? this.fleet.options.apply;
    this.emit("apply", { id: msg.id, hash: msg.hash });
    if (behaviour.neverAnswer) {
      if (behaviour.applySilently) this.adopt(msg.config);
      return;
    }
    this.applying++;
    const finish = () => {
      this.applying--;
      const result = simulateApply(msg.id, msg.config, this.appliedHash, behaviour.failDriver);
      if (result.ok) this.adopt(msg.config);
      this.send(result);
      this.emit("apply-result", { id: msg.id, ok: result.ok, hash: result.appliedHash, drivers: result.drivers });
    };
    if (behaviour.delayMs > 0) setTimeout(finish, behaviour.delayMs);
    else finish();
  }

  /**
   * Keeps only what later status messages and reads need from an applied
   * config. VRRP starts as MASTER above keepalived's default priority 100,
   * BACKUP otherwise, until `setVrrpState` says different.
   */
  private adopt(config: DeviceConfig): void {
    this.appliedHash = configHash(config);
    this.tunnelIds = config.tunnels.length === 0 ? this.fleet.syntheticTunnelIds : config.tunnels.map((t) => t.id);
    this.bgp = compactBgp(config);
    this.vrrp =
      config.vrrp.length === 0
        ? null
        : config.vrrp.map((v) => ({ groupId: v.groupId, state: v.priority > 100 ? "MASTER" : "BACKUP", since: null }));
  }

  private onRequest(req: Request): void {
    this.emit("request", { id: req.id, reason: req.method });
    const uptime = this.uptimeMs();
    const res = answerRequest(
      req,
      {
        interfaces: () => interfaceStates(this.index, uptime, this.publicAddress, this.wanAddress),
        tunnels: () => this.tunnelReports(),
        bgp: () => this.bgp,
      },
      Math.floor(uptime / 1000),
    );
    this.send(res);
    this.emit("response", { id: req.id, ok: res.ok });
  }
}

/** Rejects apply behaviours that name a driver the agent does not have. */
export function checkApplyBehaviour(b: ApplyBehaviour): void {
  if (b.failDriver !== null && !(SIM_DRIVERS as readonly string[]).includes(b.failDriver)) {
    throw new RangeError(`unknown driver "${b.failDriver}"; drivers are ${SIM_DRIVERS.join(", ")}`);
  }
  if (!(b.delayMs >= 0)) throw new RangeError(`apply delayMs must be >= 0, got ${b.delayMs}`);
}
