/**
 * A minimal control server for agent tests (as tailscale keeps one): the
 * registration endpoint and the device websocket, speaking the protocol's
 * messages. Every message from the agent is checked against DeviceMessage;
 * anything invalid is kept in `invalid` so tests can assert there is none.
 *
 *   POST <url>/api/connect/register   RegisterRequest → 201 RegisterResponse
 *   GET  <url>/api/connect/ws         websocket, Authorization: Bearer <device token>
 *                                     401 unknown token, 403 not approved;
 *                                     challenge → hello (signed with the device key,
 *                                     checked) → welcome, then apply/request/status.
 */
import { createPublicKey, randomBytes, randomUUID, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import {
  type ApplyResult,
  configHash,
  type DeviceConfig,
  DeviceMessage,
  type Hello,
  helloProofText,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  RegisterRequest,
  type RegisterResponse,
  type Rekey,
  type Response,
  rekeyProofText,
} from "@tern/protocol";
import { type WebSocket, WebSocketServer } from "ws";

export interface FakeDevice {
  deviceId: string;
  token: string;
  approved: boolean;
  machineId: string;
  /** The key it registered with; null: the first hello's key is taken (as the server does for old devices). */
  publicKey: string | null;
}

export interface FakeServerOptions {
  /** Listen on this TCP port (0 = any free one) … */
  port?: number;
  /** … of this address (default 127.0.0.1; an address of a veth into the test's namespaces reaches agents there) … */
  host?: string;
  /** … or on a unix socket (reachable from inside network namespaces, which share the file system). */
  socketPath?: string;
  registrationToken?: string;
  autoApprove?: boolean;
  statusIntervalMs?: number;
  /** Serve https/wss with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

export class FakeControlServer {
  readonly registrations: RegisterRequest[] = [];
  readonly devices = new Map<string, FakeDevice>();
  readonly received: DeviceMessage[] = [];
  /** Every valid message with the device that sent it. */
  readonly receivedFrom: { deviceId: string; message: DeviceMessage }[] = [];
  readonly invalid: { raw: string; problem: string }[] = [];
  /** Hellos refused because their proof did not verify. */
  refusedProofs = 0;
  /** Successful websocket connections (hello received). */
  connections = 0;
  /** Upgrade attempts, accepted or not. */
  attempts = 0;
  /** The next this many upgrades are refused 503 with `Retry-After: busyRetryAfter` (a server admitting a fleet). */
  busyAnswers = 0;
  busyRetryAfter = "1";
  statusIntervalMs: number;
  private readonly sockets = new Map<WebSocket, FakeDevice>();
  private readonly waiters: (() => void)[] = [];
  private seq = 0;

  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    readonly url: string,
    readonly options: FakeServerOptions,
  ) {
    this.statusIntervalMs = options.statusIntervalMs ?? 200;
  }

  static async start(options: FakeServerOptions = {}): Promise<FakeControlServer> {
    const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
    const http = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }) : createServer();
    await new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      if (options.socketPath) http.listen(options.socketPath, resolve);
      else http.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve);
    });
    const scheme = options.tls ? "https" : "http";
    const url = options.socketPath
      ? `${scheme}://unix`
      : `${scheme}://${options.host ?? "127.0.0.1"}:${(http.address() as AddressInfo).port}`;
    const server = new FakeControlServer(http, wss, url, options);
    http.on("request", (req, res) => void server.onRequest(req, res));
    http.on("upgrade", (req, socket, head) => server.onUpgrade(req, socket, head));
    return server;
  }

  get port(): number {
    return (this.http.address() as AddressInfo).port;
  }

  /** Registers a device directly (tests that skip the register command). */
  addDevice(fields: Partial<FakeDevice> = {}): FakeDevice {
    const device: FakeDevice = {
      deviceId: fields.deviceId ?? randomUUID(),
      token: fields.token ?? `dt_${randomBytes(12).toString("hex")}`,
      approved: fields.approved ?? true,
      machineId: fields.machineId ?? "",
      publicKey: fields.publicKey ?? null,
    };
    this.devices.set(device.token, device);
    return device;
  }

  messages<T extends DeviceMessage["type"]>(type: T): Extract<DeviceMessage, { type: T }>[] {
    return this.received.filter((m): m is Extract<DeviceMessage, { type: T }> => m.type === type);
  }

  /** Messages of `type` one device sent. */
  messagesFrom<T extends DeviceMessage["type"]>(deviceId: string, type: T): Extract<DeviceMessage, { type: T }>[] {
    return this.receivedFrom
      .filter((r) => r.deviceId === deviceId)
      .map((r) => r.message)
      .filter((m): m is Extract<DeviceMessage, { type: T }> => m.type === type);
  }

  /** Waits for a message of `type` from one device matching `pred` (already received ones count). */
  waitFrom<T extends DeviceMessage["type"]>(
    deviceId: string,
    type: T,
    pred: (m: Extract<DeviceMessage, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<DeviceMessage, { type: T }>> {
    return this.waitFor(type, (m) => this.messagesFrom(deviceId, type).includes(m) && pred(m), timeoutMs);
  }

  /** Waits for a message of `type` matching `pred` (already received ones count). */
  async waitFor<T extends DeviceMessage["type"]>(
    type: T,
    pred: (m: Extract<DeviceMessage, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<DeviceMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages(type).find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`fake server: no ${type} message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Sends an `apply` (to one device, or to every connected one) and waits for its result. */
  async apply(
    config: DeviceConfig,
    fields: { id?: string; hash?: string; deviceId?: string; timeoutMs?: number } = {},
  ): Promise<ApplyResult> {
    const id = fields.id ?? `apply-${++this.seq}`;
    this.send({ type: "apply", id, hash: fields.hash ?? configHash(config), config }, fields.deviceId);
    return (await this.waitFor("apply-result", (m) => m.id === id, fields.timeoutMs ?? 30_000)) as ApplyResult;
  }

  /** Sends a `request` (to one device, or to every connected one) and waits for the response. */
  async request(method: string, params: Record<string, unknown> = {}, deviceId?: string): Promise<Response> {
    const id = `req-${++this.seq}`;
    this.send({ type: "request", id, method, params }, deviceId);
    return (await this.waitFor("response", (m) => m.id === id, 30_000)) as Response;
  }

  /** Sends raw text (or an object as JSON) to every connected device. */
  broadcast(message: unknown): void {
    this.send(message);
  }

  /** Sends raw text (or an object as JSON) to one device's connections, or to all without `deviceId`. */
  send(message: unknown, deviceId?: string): void {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    for (const [ws, device] of this.sockets) if (deviceId === undefined || device.deviceId === deviceId) ws.send(text);
  }

  /** Closes every connection of one device (a link drop), leaving the others. */
  disconnect(deviceId: string, code = 1012): void {
    for (const [ws, device] of this.sockets) if (device.deviceId === deviceId) ws.close(code, "fake server drops the link");
  }

  /** Closes every device connection with a code (4009 replaced, 4003 not approved …). */
  disconnectAll(code = 1012, reason = "fake server restart"): void {
    for (const ws of this.sockets.keys()) ws.close(code, reason);
  }

  get connected(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets.keys()) ws.terminate();
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/api/connect/register")
      return json(404, { error: "not found", code: "NOT_FOUND", details: [] });
    let body = "";
    for await (const chunk of req) body += chunk;
    let parsed: ReturnType<typeof RegisterRequest.safeParse>;
    try {
      parsed = RegisterRequest.safeParse(JSON.parse(body));
    } catch {
      return json(400, { error: "body is not JSON", code: "VALIDATION_FAILED", details: [] });
    }
    if (!parsed.success)
      return json(400, {
        error: "invalid registration",
        code: "VALIDATION_FAILED",
        details: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
      });
    if (parsed.data.token !== (this.options.registrationToken ?? "rt_test"))
      return json(401, { error: "unknown registration token", code: "UNAUTHENTICATED", details: [] });
    this.registrations.push(parsed.data);
    const device = this.addDevice({
      approved: this.options.autoApprove ?? true,
      machineId: parsed.data.machineId,
      publicKey: parsed.data.identity.publicKey,
    });
    const answer: RegisterResponse = { deviceId: device.deviceId, deviceToken: device.token, isApproved: device.approved };
    json(201, answer);
  }

  private onUpgrade(req: IncomingMessage, socket: import("node:stream").Duplex, head: Buffer): void {
    this.attempts++;
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const device = token ? this.devices.get(token) : undefined;
    if (this.busyAnswers > 0) {
      this.busyAnswers--;
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nretry-after: ${this.busyRetryAfter}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      );
    } else if (req.url !== "/api/connect/ws") refuse(404, "Not Found");
    else if (!device) refuse(401, "Unauthorized");
    else if (!device.approved) refuse(403, "Forbidden");
    else this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, device, req.headers.host ?? ""));
  }

  private onConnection(ws: WebSocket, device: FakeDevice, host: string): void {
    let helloed = false;
    const nonce = randomBytes(24).toString("base64url");
    ws.send(JSON.stringify({ type: "challenge", nonce, publicKey: device.publicKey }));
    ws.on("message", (data) => {
      const raw = String(data);
      let parsed: ReturnType<typeof DeviceMessage.safeParse>;
      try {
        parsed = DeviceMessage.safeParse(JSON.parse(raw));
      } catch {
        this.invalid.push({ raw, problem: "not JSON" });
        return;
      }
      if (!parsed.success) {
        this.invalid.push({ raw, problem: parsed.error.message });
        return;
      }
      this.received.push(parsed.data);
      this.receivedFrom.push({ deviceId: device.deviceId, message: parsed.data });
      if (parsed.data.type === "rekey" && helloed) {
        if (rekeyProven(parsed.data, device, nonce)) {
          device.publicKey = parsed.data.publicKey;
          ws.send(JSON.stringify({ type: "rekeyed", publicKey: parsed.data.publicKey }));
        } else ws.send(JSON.stringify({ type: "error", code: "IDENTITY_PROOF_INVALID", message: "re-key not proven" }));
      }
      if (parsed.data.type === "hello" && !helloed) {
        if (!proven(parsed.data, device, nonce, host)) {
          this.refusedProofs++;
          ws.close(4001, "device identity not proven");
          return;
        }
        device.publicKey ??= parsed.data.proof!.publicKey;
        helloed = true;
        this.connections++;
        this.sockets.set(ws, device);
        ws.send(
          JSON.stringify({
            type: "welcome",
            deviceId: device.deviceId,
            protocolVersion: PROTOCOL_VERSION,
            serverVersion: "fake-0",
            statusIntervalMs: this.statusIntervalMs,
          }),
        );
      }
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on("close", () => this.sockets.delete(ws));
  }
}

/** The hello is signed by the device's key (or, before it has one, by the key it presents) over this link. */
function proven(hello: Hello, device: FakeDevice, nonce: string, host: string): boolean {
  const proof = hello.proof;
  if (!proof || (device.publicKey !== null && proof.publicKey !== device.publicKey)) return false;
  if (new URL(proof.url).host !== host) return false;
  const text = helloProofText({ nonce, deviceId: device.deviceId, machineId: hello.machineId, url: proof.url });
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: proof.publicKey }, format: "jwk" });
  return verify(null, Buffer.from(text), key, Buffer.from(proof.signature, "base64url"));
}

function verifies(publicKey: string, text: string, signature: string): boolean {
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: publicKey }, format: "jwk" });
  return verify(null, Buffer.from(text), key, Buffer.from(signature, "base64url"));
}

/** Both the current and the new key signed the new key with this link's challenge. */
function rekeyProven(rekey: Rekey, device: FakeDevice, nonce: string): boolean {
  const text = rekeyProofText({ nonce, deviceId: device.deviceId, publicKey: rekey.publicKey });
  return (
    device.publicKey !== null &&
    verifies(device.publicKey, text, rekey.signature) &&
    verifies(rekey.publicKey, text, rekey.newKeySignature)
  );
}
