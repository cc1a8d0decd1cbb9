/**
 * The control link: one websocket to `<server>/api/connect/ws` with the device
 * token as a Bearer header. The server opens with a one-time `challenge`; the
 * agent answers `hello` (protocol version, agent version, machine id, applied
 * hash) signed with the device key over the challenge, its device id, machine
 * id and the URL it connected to; `welcome` makes it connected. It hands
 * `apply` to the reconcile loop and answers `apply-result`, answers `request`
 * with `response`, and reconnects with exponential back-off and jitter when
 * the link drops or goes silent (or, when the server refused the upgrade as
 * busy, after the Retry-After it gave). Nothing here changes the router: offline,
 * the agent keeps running its last good config.
 */
import {
  type ApplyResult as ApplyResultMessage,
  Challenge,
  CLOSE_CODES,
  type DeviceMessage,
  type Hello,
  helloProofText,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  Rekeyed,
  rekeyProofText,
  type UpgradeRefusal,
  upgradeRefusal,
  Welcome,
} from "@tern/protocol";
import WebSocket from "ws";
import type { Logger } from "../drivers/driver.ts";
import { AgentError, describeError } from "../errors.ts";
import { type DeviceKey, signText } from "../identity/device-key.ts";
import { Backoff, type BackoffOptions, DEFAULT_BACKOFF } from "./backoff.ts";
import { ProgressSender } from "./progress.ts";
import type { RequestRun } from "./requests.ts";

export type ConnectionState = "connecting" | "connected" | "disconnected" | "stopped";

export interface ControlHandlers {
  hello(): Omit<Hello, "type" | "proof">;
  welcome(message: Welcome): void;
  /** `config` is unvalidated: the reconcile loop validates it and answers refusals with a code. */
  apply(message: { id: string; hash: string | undefined; config: unknown }): Promise<Omit<ApplyResultMessage, "type" | "id">>;
  /** `run`: the request's id (for `cancel`) and where its output lines go as they come (`request-progress`). */
  request(method: string, params: unknown, run?: RequestRun): Promise<unknown>;
  /** Connection state changes (metrics, status file). */
  state?(state: ConnectionState, detail: string | null): void;
}

export interface ControlClientOptions {
  url: string;
  token: string;
  /** The device id the hello signs (the registration's). */
  deviceId: string;
  /** The device key to prove, given the key the server's challenge says it holds (null: none yet). */
  key(serverKey: string | null): Promise<DeviceKey>;
  /** Trusted CA certificates for wss (tls.ts); undefined = Node's roots. */
  ca?: string[] | undefined;
  handlers: ControlHandlers;
  log: Logger;
  backoff?: BackoffOptions;
  /** Reconnect when nothing (message or ping) came from the server for this long. */
  silenceTimeoutMs?: number;
  /** Give up on a connection that said no `welcome` within this time. */
  welcomeTimeoutMs?: number;
}

/** Close codes and HTTP answers that a quick retry cannot fix: wait the longest back-off. */
const SLOW_RETRY_CODES = new Set<number>([
  CLOSE_CODES.unauthenticated,
  CLOSE_CODES.notApproved,
  CLOSE_CODES.protocolVersion,
  CLOSE_CODES.deviceDeleted,
]);

export class ControlClient {
  state: ConnectionState = "disconnected";
  since: string | null = null;
  lastError: string | null = null;
  reconnects = 0;
  welcome: Welcome | null = null;
  /** Address and port of the server end of the current (or last) connection, as the TCP socket saw it. */
  peer: { address: string; port: number } | null = null;
  private ws: WebSocket | null = null;
  /** The challenge and the key of the current link (a re-key signs with both). */
  private link: { nonce: string; key: DeviceKey } | null = null;
  private rekeyWaiter: { resolve(publicKey: string): void; reject(err: Error): void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private silence: NodeJS.Timeout | null = null;
  private readonly backoff: Backoff;
  private slowRetry = false;
  /** The server refused the upgrade saying when to come back (503/429 with Retry-After): that, not the back-off. */
  private retryAfter: number | null = null;
  private attempts = 0;

  constructor(private readonly options: ControlClientOptions) {
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
  }

  start(): void {
    if (this.state === "stopped") this.state = "disconnected";
    this.connect();
  }

  async stop(): Promise<void> {
    this.setState("stopped", null);
    if (this.timer) clearTimeout(this.timer);
    if (this.silence) clearTimeout(this.silence);
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
      ws.close(1000, "agent stopping");
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
      ws.terminate();
    }
  }

  get connected(): boolean {
    return this.state === "connected";
  }

  /** Sends a message when connected (hello and welcome done); returns false otherwise. */
  send(message: DeviceMessage): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || (this.state !== "connected" && message.type !== "hello"))
      return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  private setState(state: ConnectionState, detail: string | null): void {
    if (this.state === state && detail === null) return;
    this.state = state;
    this.since = new Date().toISOString();
    this.options.handlers.state?.(state, detail);
  }

  private connect(): void {
    if (this.state === "stopped") return;
    if (this.attempts++ > 0) this.reconnects++;
    this.slowRetry = false;
    this.retryAfter = null;
    this.setState("connecting", null);
    const ws = new WebSocket(this.options.url, {
      headers: { authorization: `Bearer ${this.options.token}` },
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: 10_000,
      ...(this.options.ca ? { ca: this.options.ca } : {}),
    });
    this.link = null;
    this.ws = ws;
    let welcomed = false;
    const welcomeTimer = setTimeout(() => {
      if (!welcomed) {
        this.lastError = "no welcome from the server";
        ws.terminate();
      }
    }, this.options.welcomeTimeoutMs ?? 10_000);

    ws.on("upgrade", (res) => {
      const { remoteAddress, remotePort } = res.socket;
      if (remoteAddress && remotePort) this.peer = { address: remoteAddress.replace(/^::ffff:/, ""), port: remotePort };
    });
    // The hello waits for the server's challenge (the first message).
    ws.on("open", () => this.armSilence(ws));
    ws.on("ping", () => this.armSilence(ws));
    ws.on("message", (data, isBinary) => {
      this.armSilence(ws);
      if (isBinary) return this.protocolError(ws, "binary messages are not part of the protocol");
      let message: unknown;
      try {
        message = JSON.parse(String(data));
      } catch {
        return this.protocolError(ws, "message is not JSON");
      }
      const type = (message as { type?: unknown })?.type;
      if (type === "challenge") {
        const c = Challenge.safeParse(message);
        if (!c.success || welcomed) return this.protocolError(ws, "bad challenge");
        void this.hello(ws, c.data).catch((err: unknown) => {
          this.lastError = `cannot prove the device identity: ${describeError(err)}`;
          this.options.log.error("cannot sign the hello", { error: this.lastError });
          ws.close(1000, "no device key");
        });
        return;
      }
      if (type === "rekeyed") {
        const r = Rekeyed.safeParse(message);
        if (r.success && this.rekeyWaiter) this.rekeyWaiter.resolve(r.data.publicKey);
        return;
      }
      if (type === "welcome") {
        const w = Welcome.safeParse(message);
        if (!w.success) return this.protocolError(ws, "bad welcome");
        welcomed = true;
        clearTimeout(welcomeTimer);
        this.welcome = w.data;
        this.backoff.reset();
        this.lastError = null;
        if (w.data.protocolVersion !== PROTOCOL_VERSION)
          this.options.log.warn("server speaks another protocol version", {
            server: w.data.protocolVersion,
            agent: PROTOCOL_VERSION,
          });
        this.setState("connected", null);
        this.options.log.info("connected", { deviceId: w.data.deviceId, serverVersion: w.data.serverVersion });
        this.options.handlers.welcome(w.data);
        return;
      }
      void this.dispatch(ws, message as Record<string, unknown>);
    });
    // An upgrade answered with something else than 101: read its Retry-After, then end the attempt
    // (with this listener, ws leaves that to us; the error it then emits names no status, so it is kept).
    let refused: UpgradeRefusal | null = null;
    ws.on("unexpected-response", (_req, res) => {
      refused = upgradeRefusal(res.statusCode ?? 0, res.headers["retry-after"]);
      this.retryAfter = refused.retryAfterMs;
      res.resume();
      ws.terminate();
    });
    ws.on("error", (err) => {
      this.lastError = refused?.error ?? describeError(err);
      // The upgrade was answered with 401/403: the token or the approval is the problem.
      if (/Unexpected server response: 40[13]/.test(this.lastError)) this.slowRetry = true;
    });
    ws.on("close", (code, reasonBuffer) => {
      clearTimeout(welcomeTimer);
      this.rekeyWaiter?.reject(new Error(`the link closed (${code})`));
      if (this.silence) clearTimeout(this.silence);
      if (this.ws !== ws) return;
      this.ws = null;
      const reason = reasonBuffer.toString();
      if (code !== 1006 || !this.lastError) this.lastError = `closed ${code}${reason ? `: ${reason}` : ""}`;
      if (SLOW_RETRY_CODES.has(code)) this.slowRetry = true;
      if (this.state === "stopped") return;
      const delay =
        this.retryAfter !== null
          ? Math.min(this.retryAfter, (this.options.backoff ?? DEFAULT_BACKOFF).maxMs)
          : this.slowRetry
            ? this.backoff.longest()
            : this.backoff.next();
      this.setState("disconnected", this.lastError);
      this.options.log.warn("control link down; reconnecting", { error: this.lastError, inMs: delay });
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }

  /** Answers the challenge: the hello, signed with the key the server holds. */
  private async hello(ws: WebSocket, challenge: Challenge): Promise<void> {
    const key = await this.options.key(challenge.publicKey);
    const hello = this.options.handlers.hello();
    const url = this.options.url;
    const text = helloProofText({ nonce: challenge.nonce, deviceId: this.options.deviceId, machineId: hello.machineId, url });
    this.link = { nonce: challenge.nonce, key };
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(
      JSON.stringify({
        type: "hello",
        ...hello,
        proof: { publicKey: key.publicKey, url, signature: signText(key, text) },
      } satisfies Hello),
    );
  }

  /**
   * Replaces the device key with `next` on the connected link: both keys sign the new public key with
   * the link's challenge. Resolves once the server holds the new key (later hellos must use it);
   * rejects when the server refuses or the link drops first.
   */
  async rekey(next: DeviceKey, timeoutMs = 10_000): Promise<void> {
    const ws = this.ws;
    const link = this.link;
    if (!ws || !link || this.state !== "connected") throw new AgentError("NOT_REGISTERED", "not connected to the server");
    const text = rekeyProofText({ nonce: link.nonce, deviceId: this.options.deviceId, publicKey: next.publicKey });
    const stored = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to the re-key within ${timeoutMs} ms`)), timeoutMs);
      this.rekeyWaiter = {
        resolve: (k) => {
          clearTimeout(timer);
          resolve(k);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    }).finally(() => {
      this.rekeyWaiter = null;
    });
    ws.send(
      JSON.stringify({
        type: "rekey",
        publicKey: next.publicKey,
        signature: signText(link.key, text),
        newKeySignature: signText(next, text),
      } satisfies DeviceMessage),
    );
    const publicKey = await stored;
    if (publicKey !== next.publicKey) throw new Error("the server stored another key");
    this.link = { nonce: link.nonce, key: next };
  }

  private armSilence(ws: WebSocket): void {
    if (this.silence) clearTimeout(this.silence);
    this.silence = setTimeout(() => {
      this.lastError = "the server went silent";
      ws.terminate();
    }, this.options.silenceTimeoutMs ?? 60_000);
  }

  private protocolError(ws: WebSocket, message: string): void {
    this.options.log.warn("bad message from the server", { message });
    if (ws.readyState === WebSocket.OPEN)
      ws.send(JSON.stringify({ type: "error", code: "VALIDATION_FAILED", message } satisfies DeviceMessage));
  }

  private async dispatch(ws: WebSocket, m: Record<string, unknown>): Promise<void> {
    const reply = (msg: DeviceMessage) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    };
    if (m.type === "apply" && typeof m.id === "string") {
      const id = m.id;
      const result = await this.options.handlers
        .apply({ id, hash: typeof m.hash === "string" ? m.hash : undefined, config: m.config })
        .catch((err: unknown) => ({
          ok: false,
          appliedHash: null,
          rolledBack: false,
          drivers: [],
          error: `INTERNAL: ${describeError(err)}`,
        }));
      reply({ type: "apply-result", id, ...result });
      return;
    }
    if (m.type === "request" && typeof m.id === "string") {
      const id = m.id;
      const progress = new ProgressSender(id, reply);
      try {
        const result = await this.options.handlers.request(String(m.method), m.params, {
          id,
          onLine: (line) => progress.line(line),
        });
        progress.flush();
        reply({ type: "response", id, ok: true, result });
      } catch (err) {
        progress.flush();
        reply({ type: "response", id, ok: false, error: describeError(err) });
      }
      return;
    }
    if (m.type === "error") {
      this.options.log.warn("server reported an error", { code: m.code, message: m.message });
      this.lastError = `server: ${String(m.code)}: ${String(m.message)}`;
      if (m.code === "IDENTITY_PROOF_INVALID") this.rekeyWaiter?.reject(new Error(this.lastError));
      return;
    }
    this.protocolError(ws, `unexpected message type ${JSON.stringify(m.type)}`);
  }
}
