/**
 * One device's websocket: framing, validation, rate limit, liveness counters,
 * outgoing messages and on-demand requests waiting for their response. What a
 * message means is decided by the link handler; everything that touches the
 * database for one device runs through `serial()`, so a device's hello,
 * results, reports and disconnect are handled in the order they happened.
 */
import { randomUUID } from "node:crypto";
import type { DeviceMessage, Hello, RequestProgress, Response, ServerMessage } from "@tern/protocol";
import type { Logger } from "pino";
import WebSocket from "ws";
import type { PublicAddressHistory } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import type { ServerMetrics, WsErrorKind } from "../metrics/server-metrics.ts";
import { deviceTimeout, notConnected } from "./device-link.ts";
import { parseInbound } from "./inbound.ts";
import { TokenBucket } from "./token-bucket.ts";
import type { LinkDevice } from "./upgrade.ts";

export interface InFlightApply {
  applyId: string;
  hash: string;
  sentAt: number;
  timer: NodeJS.Timeout;
}

interface PendingRequest {
  method: string;
  resolve(response: Response): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** Output lines of a streamed request (ping, traceroute, dns-lookup) as the device sends them. */
  onProgress?: ((lines: string[]) => void) | undefined;
  /** The caller went away: its late progress and response are taken and dropped. */
  cancelled?: boolean;
}

/** What a streamed request adds to a plain one. */
export interface RequestStream {
  onProgress?: ((lines: string[]) => void) | undefined;
  /** Aborting stops the request on the device (`cancel`) and rejects it with REQUEST_CANCELLED. */
  signal?: AbortSignal | undefined;
  /** Called once the request went out on the link. */
  onSent?: (() => void) | undefined;
}

export interface ConnectionHooks {
  onMessage(conn: DeviceConnection, message: DeviceMessage): void;
  onClose(conn: DeviceConnection, code: number, reason: string): void;
}

export interface ConnectionLimits {
  rate: number;
  rateBurst: number;
  helloTimeoutMs: number;
}

/** Results of applies that already timed out are still taken (they correct jobs): remember this many. */
const RECENT_APPLIES = 8;
/** Messages dropped by the rate limit in a row before the link is closed. */
const DROPS_BEFORE_CLOSE = 1000;

/**
 * A device's websocket that knows its link (the gateway's WebSocketServer makes these). The link's listeners
 * are functions every link shares, reaching their link through the socket they are called on: four closures
 * of each link and their context took about 300 bytes of heap a device.
 */
export class LinkSocket extends WebSocket {
  link: DeviceConnection | null = null;
}

export class DeviceConnection {
  readonly sessionId = randomUUID();
  readonly openedAt = Date.now();
  /** hello: waiting for it; welcoming: hello taken, database work running; ready: welcomed. */
  state: "hello" | "welcoming" | "ready" | "closed" = "hello";
  /** True once welcomed (also after close): the link counted as connected. */
  welcomed = false;
  /** Messages that arrived while welcoming, handled once ready (made at the first). */
  early: DeviceMessage[] | null = null;
  /** A dispatch for this device waits in the chain already (wake-ups coalesce). */
  wakePending = false;
  /** A wake-up (jobs queued, sweep) came since the last apply was sent: its result must dispatch again. */
  wokenSinceSend = false;
  missedPongs = 0;
  /** What the device last said it has applied (hello, result or status). */
  appliedHash: string | null = null;
  /** The applied hash jobs were last settled against (undefined: never). */
  settledHash: string | null | undefined = undefined;
  /** The applied hash of the last status (a change is worth a look at the jobs). */
  lastStatusHash: string | null | undefined = undefined;
  /** The device's own `applying` flag from its last status. */
  deviceApplying = false;
  inFlight: InFlightApply | null = null;
  /**
   * Apply ids sent on this link and their hashes, in pairs, newest last (at most RECENT_APPLIES). An array of a
   * few strings: a Map took about 180 bytes more a device.
   */
  private recentApplies: string[] = [];
  /** The device's tunnels and which end it is: reports of other tunnels are ignored. */
  tunnelSides = new Map<string, "a" | "b">();
  tunnelSidesLoadedAt = 0;
  /** The device's configured interfaces by devId, and what their public addresses did lately. */
  publicAddresses: Record<string, PublicAddressHistory> = {};
  /** The device's interfaces by devId → the address last stored or reported ("IPv4/mask"), see wan-address.ts. */
  wanAddresses: Record<string, string> = {};
  /** The VRRP list of the last status whose states were recorded (unchanged lists are not written again). */
  lastVrrpJson: string | undefined = undefined;
  /**
   * The hello being recorded, for the hello's transaction (its session's columns); null once the link is welcomed,
   * as nothing reads it again (about 130 bytes of heap a device).
   */
  hello: Hello | null = null;
  /**
   * The one-time challenge sent when the link opened, and the host the device reached us at: its hello must sign
   * both, a re-key the nonce. The host is let go once the hello is proven. Two fields rather than an object of its
   * own: about 60 bytes of heap a device less. `publicKey` is the key it proved (set by the hello, replaced by a
   * re-key).
   */
  challengeNonce = "";
  challengeHost = "";
  publicKey: string | null = null;
  private readonly baseLogger: Logger;

  private chain: Promise<void> = Promise.resolve();
  /** On-demand requests waiting for their response (made on first use: most links never have one). */
  private pendingRequests: Map<string, PendingRequest> | null = null;
  private readonly bucket: TokenBucket;
  private drops = 0;
  private lastRateErrorAt = 0;
  private lastFaultLogAt = 0;
  private faultsNotLogged = 0;
  private helloTimer: NodeJS.Timeout | null;
  /** Until the link is welcomed or closed (then dropped, as the rest of the link's life does not need it). */
  private admittedResolve: (() => void) | null = null;
  private admitted: Promise<void> | null = new Promise<void>((resolve) => {
    this.admittedResolve = resolve;
  });

  constructor(
    readonly ws: LinkSocket,
    readonly device: LinkDevice,
    readonly remoteAddress: string,
    private readonly hooks: ConnectionHooks,
    private readonly metrics: ServerMetrics,
    limits: ConnectionLimits,
    logger: Logger,
  ) {
    this.baseLogger = logger;
    this.bucket = new TokenBucket(limits.rate, limits.rateBurst);
    const helloTimeoutMs = limits.helloTimeoutMs;
    this.helloTimer = setTimeout(() => {
      this.fault("hello-timeout", `no hello within ${helloTimeoutMs} ms`);
      this.close(4400, "hello expected");
    }, helloTimeoutMs);
    ws.link = this;
    ws.on("message", onSocketMessage);
    ws.on("pong", onSocketPong);
    ws.on("error", onSocketError);
    ws.on("close", onSocketClose);
  }

  /**
   * The link's logger, made when something is logged: a link logs when it connects, closes or
   * fails, and a child logger kept by every link held about 330 bytes each.
   */
  get logger(): Logger {
    return this.baseLogger.child({ deviceId: this.device.id, session: this.sessionId.slice(0, 8) });
  }

  get deviceId(): string {
    return this.device.id;
  }

  get orgId(): string {
    return this.device.orgId;
  }

  get open(): boolean {
    return this.state !== "closed" && this.ws.readyState === WebSocket.OPEN;
  }

  /** Runs `fn` after everything queued before it for this device; errors are logged, the chain goes on. */
  serial(what: string, fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn).catch((err) => this.logger.error({ err, what }, "device link work failed"));
    this.chain = next;
    return next;
  }

  /** Resolves when everything queued so far has run. */
  idle(): Promise<void> {
    return this.chain;
  }

  /** Resolves once the link is welcomed or closed (the gateway's admission count). */
  welcomedOrClosed(): Promise<void> {
    return this.admitted ?? Promise.resolve();
  }

  /** The hello is recorded and welcomed: the link no longer counts as being admitted. */
  admittedNow(): void {
    this.admittedResolve?.();
    this.admittedResolve = null;
    this.admitted = null;
  }

  helloDone(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = null;
  }

  send(message: ServerMessage): boolean {
    return this.sendText(JSON.stringify(message));
  }

  /** Sends an already serialized ServerMessage. */
  sendText(text: string): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(text);
    return true;
  }

  /** An `error` message to the device (the link stays up), counted and logged. */
  reject(kind: WsErrorKind, code: string, message: string): void {
    this.fault(kind, message);
    this.send({ type: "error", code, message });
  }

  fault(kind: WsErrorKind, message: string): void {
    this.metrics.wsErrors.inc({ kind });
    // One line per second at most, with the count of those left out: a misbehaving device cannot flood the log.
    const now = Date.now();
    if (now - this.lastFaultLogAt < 1000) {
      this.faultsNotLogged++;
      return;
    }
    this.lastFaultLogAt = now;
    this.logger.warn({ kind, notLogged: this.faultsNotLogged || undefined }, message);
    this.faultsNotLogged = 0;
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.CLOSED || this.ws.readyState === WebSocket.CLOSING) return;
    // A close reason is at most 123 bytes on the wire.
    this.ws.close(code, Buffer.from(reason).subarray(0, 123).toString());
    // A peer that never answers the close frame is cut after a while.
    setTimeout(() => this.ws.terminate(), 5_000).unref();
  }

  rememberApply(applyId: string, hash: string): void {
    let recent = this.recentApplies;
    const known = recent.indexOf(applyId);
    if (known >= 0 && known % 2 === 0) recent = recent.filter((_, i) => i !== known && i !== known + 1);
    // A new array of the exact size each time (push would reserve room for 17).
    this.recentApplies = recent.slice(Math.max(0, recent.length + 2 - 2 * RECENT_APPLIES)).concat(applyId, hash);
  }

  /** The hash an apply of this id sent on this link carried (one of the last RECENT_APPLIES), else undefined. */
  sentHashOf(applyId: string): string | undefined {
    const recent = this.recentApplies;
    for (let i = recent.length - 2; i >= 0; i -= 2) if (recent[i] === applyId) return recent[i + 1];
    return undefined;
  }

  /**
   * Sends `request` and resolves with the device's `response`; DEVICE_TIMEOUT / DEVICE_NOT_CONNECTED otherwise.
   * `stream.onProgress` gets the lines of `request-progress` messages; aborting `stream.signal` sends the device
   * `cancel` for this request and rejects with REQUEST_CANCELLED.
   */
  request(method: string, params: Record<string, unknown>, timeoutMs: number, stream: RequestStream = {}): Promise<Response> {
    const id = randomUUID();
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingRequests?.delete(id);
        reject(deviceTimeout(this.deviceId, method, timeoutMs));
      }, timeoutMs);
      const pending: PendingRequest = { method, resolve, reject, timer, onProgress: stream.onProgress };
      this.pendingRequests ??= new Map();
      this.pendingRequests.set(id, pending);
      if (this.state !== "ready" || !this.send({ type: "request", id, method: method as never, params })) {
        clearTimeout(timer);
        this.pendingRequests?.delete(id);
        reject(notConnected(this.deviceId));
        return;
      }
      stream.onSent?.();
      const signal = stream.signal;
      if (!signal) return;
      const onAbort = () => {
        if (this.pendingRequests?.get(id) !== pending || pending.cancelled) return;
        pending.cancelled = true;
        pending.onProgress = undefined;
        reject(new ApiError("REQUEST_CANCELLED", `${method} was cancelled by its caller`));
        // The device stops it and still answers: that answer (and the cancel's) are taken and dropped.
        this.request("cancel", { id }, timeoutMs).catch(() => undefined);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Hands a `request-progress` to its waiting request; false when no request of that id is waiting. */
  takeProgress(message: RequestProgress): boolean {
    const pending = this.pendingRequests?.get(message.id);
    if (!pending) return false;
    pending.onProgress?.(message.lines);
    return true;
  }

  /** Hands a `response` to its waiting request; false when no request of that id is waiting. */
  takeResponse(message: Response): { method: string } | null {
    const pending = this.pendingRequests?.get(message.id);
    if (!pending) return null;
    this.pendingRequests?.delete(message.id);
    clearTimeout(pending.timer);
    if (!pending.cancelled) pending.resolve(message);
    return { method: pending.method };
  }

  /** A frame from the device (the socket's listener below). */
  onFrame(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.state === "closed") return;
    this.missedPongs = 0;
    if (!this.bucket.take()) {
      this.drops++;
      this.metrics.wsErrors.inc({ kind: "rate-limited" });
      const now = Date.now();
      // One error message per second at most, so the limit does not turn into an echo of the flood.
      if (now - this.lastRateErrorAt >= 1000) {
        this.lastRateErrorAt = now;
        this.logger.warn({ drops: this.drops }, "device over its message rate: messages dropped");
        this.send({ type: "error", code: "RATE_LIMITED", message: "too many messages: dropped; slow down" });
      }
      if (this.drops >= DROPS_BEFORE_CLOSE) this.close(4429, "message rate limit exceeded");
      return;
    }
    this.drops = 0;
    const inbound = parseInbound(data, isBinary);
    if (!inbound.ok) {
      this.reject(inbound.kind, inbound.code, inbound.message);
      return;
    }
    this.metrics.wsMessages.inc({ type: inbound.message.type });
    this.hooks.onMessage(this, inbound.message);
  }

  /** The socket closed (its listener below). */
  onClosed(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.admittedNow();
    if (this.helloTimer) clearTimeout(this.helloTimer);
    if (this.inFlight) clearTimeout(this.inFlight.timer);
    for (const [id, p] of this.pendingRequests ?? []) {
      clearTimeout(p.timer);
      p.reject(notConnected(this.deviceId));
      this.pendingRequests?.delete(id);
    }
    this.hooks.onClose(this, code, reason);
  }
}

// The link's listeners, shared by every link: ws calls them with the socket as `this` (typed as the base class).
function onSocketMessage(this: WebSocket, data: WebSocket.RawData, isBinary: boolean): void {
  (this as LinkSocket).link?.onFrame(data, isBinary);
}

function onSocketPong(this: WebSocket): void {
  const link = (this as LinkSocket).link;
  if (link) link.missedPongs = 0;
}

function onSocketError(this: WebSocket, err: Error & { code?: string }): void {
  const oversized = err.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH";
  (this as LinkSocket).link?.fault(oversized ? "oversized" : "socket", err.message);
}

function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
  (this as LinkSocket).link?.onClosed(code, reason.toString());
}
