/**
 * A minimal stand-in for Tern's device gateway, for simulator tests and
 * benchmark load without the real server: `POST /api/connect/register` and the
 * websocket handshake (token, approval, challenge → signed hello → welcome,
 * replacement; the hello must be signed by the key the device registered), every
 * inbound message validated against the protocol and recorded. It has no
 * database, jobs or ingestion: the real gateway is apps/server.
 */
import { createPublicKey, randomBytes, randomUUID, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ApplyResult,
  CLOSE_CODES,
  configHash,
  type DeviceConfig,
  type DeviceMessage,
  type ErrorBody,
  type ErrorCode,
  type Hello,
  helloProofText,
  issuesToDetails,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  RegisterRequest,
  type RegisterResponse,
  type RequestMethod,
  type Response,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@tern/protocol";
import { WebSocketServer } from "ws";
import { FakeLink, type InboundWaiter } from "./link.ts";

export interface FakeServerOptions {
  /** Registration tokens accepted by `POST /api/connect/register`. */
  tokens: string[];
  /** Devices registered approved (default) or waiting for `approve()`. */
  autoApprove: boolean;
  /** `statusIntervalMs` sent in `welcome`. */
  statusIntervalMs: number;
  /** Keep every inbound message per device (tests); false keeps counts only (load). */
  record: boolean;
  /** Ping every device this often and drop those that did not answer the previous ping; 0 = off. */
  pingIntervalMs: number;
  /** TCP port on 127.0.0.1; 0 = any free port. */
  port: number;
}

/** A registered device as the fake server knows it. */
export interface FakeDevice {
  deviceId: string;
  deviceToken: string;
  machineId: string;
  hostname: string;
  approved: boolean;
  registration: RegisterRequest;
  /** Inbound messages in arrival order (only with `record`). */
  messages: DeviceMessage[];
  /** Inbound messages by type, always counted. */
  counts: Record<string, number>;
  /** Messages that failed validation, with the reason. */
  invalid: { text: string; reason: string }[];
  /** Close codes of this device's past connections, in order. */
  closes: { code: number; reason: string }[];
  link: FakeLink | null;
}

export class FakeServer {
  readonly options: FakeServerOptions;
  readonly devices = new Map<string, FakeDevice>();
  /** Websocket upgrades refused before a device was known (bad token). */
  readonly refused: { code: number; reason: string }[] = [];
  /** The next this many upgrades are refused 503 with `Retry-After: busyRetryAfter` (a server admitting a fleet); when each was. */
  busyAnswers = 0;
  busyRetryAfter = "1";
  readonly busyRefusals: number[] = [];
  /** When each websocket upgrade arrived (performance.now()). */
  readonly upgradesAt: number[] = [];
  private readonly byToken = new Map<string, FakeDevice>();
  private readonly byMachine = new Map<string, FakeDevice>();
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private pinger: NodeJS.Timeout | null = null;
  url = "";

  private constructor(options: FakeServerOptions) {
    this.options = options;
    this.http = createServer((req, res) => void this.onHttp(req, res));
    this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false });
    this.http.on("upgrade", (req, socket, head) => {
      this.upgradesAt.push(performance.now());
      if (this.busyAnswers > 0) {
        this.busyAnswers--;
        this.busyRefusals.push(performance.now());
        socket.end(`HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${this.busyRetryAfter}\r\nConnection: close\r\n\r\n`);
        return;
      }
      if (new URL(req.url ?? "/", "http://x").pathname !== "/api/connect/ws") {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, req));
    });
  }

  static async start(options: Partial<FakeServerOptions> = {}): Promise<FakeServer> {
    const server = new FakeServer({
      tokens: ["sim-registration-token"],
      autoApprove: true,
      statusIntervalMs: 5000,
      record: true,
      pingIntervalMs: 0,
      port: 0,
      ...options,
    });
    await new Promise<void>((resolve) => server.http.listen(server.options.port, "127.0.0.1", resolve));
    server.url = `http://127.0.0.1:${(server.http.address() as AddressInfo).port}`;
    if (server.options.pingIntervalMs > 0) {
      server.pinger = setInterval(() => {
        for (const d of server.devices.values()) d.link?.heartbeat();
      }, server.options.pingIntervalMs);
    }
    return server;
  }

  device(deviceId: string): FakeDevice {
    const d = this.devices.get(deviceId);
    if (!d) throw new Error(`fake server: no device ${deviceId}`);
    return d;
  }

  byMachineId(machineId: string): FakeDevice | undefined {
    return this.byMachine.get(machineId);
  }

  /** Connected devices that have said hello. */
  get connectedCount(): number {
    let n = 0;
    for (const d of this.devices.values()) if (d.link?.welcomed) n++;
    return n;
  }

  approve(deviceId: string): void {
    this.device(deviceId).approved = true;
  }

  /** Sends any text (tests of bad server input). */
  sendRaw(deviceId: string, text: string): void {
    this.linkOf(deviceId).sendRaw(text);
  }

  /** Sends `apply` with the config's hash and resolves with the device's `apply-result`. */
  apply(deviceId: string, config: DeviceConfig, timeoutMs = 10_000): Promise<ApplyResult> {
    const id = randomUUID();
    const link = this.linkOf(deviceId);
    const result = link.waitFor("apply-result", timeoutMs, (m) => m.type === "apply-result" && m.id === id);
    link.send({ type: "apply", id, hash: configHash(config), config });
    return result as Promise<ApplyResult>;
  }

  /** Asks the device for an on-demand read and resolves with its `response`. */
  request(deviceId: string, method: RequestMethod, params: Record<string, unknown>, timeoutMs = 10_000): Promise<Response> {
    const id = randomUUID();
    const link = this.linkOf(deviceId);
    const result = link.waitFor("response", timeoutMs, (m) => m.type === "response" && m.id === id);
    link.send({ type: "request", id, method, params });
    return result as Promise<Response>;
  }

  /** Resolves at the device's next inbound message of `type`. */
  waitForMessage(
    deviceId: string,
    type: DeviceMessage["type"],
    timeoutMs = 10_000,
    filter?: InboundWaiter["filter"],
  ): Promise<DeviceMessage> {
    return this.linkOf(deviceId).waitFor(type, timeoutMs, filter);
  }

  /** Closes the device's connection with an application close code. */
  kick(deviceId: string, code: number, reason: string): void {
    this.linkOf(deviceId).close(code, reason);
  }

  async stop(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private linkOf(deviceId: string): FakeLink {
    const link = this.device(deviceId).link;
    if (!link) throw new Error(`fake server: device ${deviceId} is not connected`);
    return link;
  }

  private async onHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method !== "POST" || path !== "/api/connect/register")
      return reply(res, 404, error("NOT_FOUND", `no route ${req.method} ${path}`));
    let json: unknown;
    try {
      json = JSON.parse(await readBody(req));
    } catch {
      return reply(res, 400, error("VALIDATION_FAILED", "body is not JSON"));
    }
    const parsed = RegisterRequest.safeParse(json);
    if (!parsed.success)
      return reply(res, 400, error("VALIDATION_FAILED", "invalid registration", issuesToDetails(parsed.error.issues)));
    const body = parsed.data;
    if (!this.options.tokens.includes(body.token)) return reply(res, 401, error("UNAUTHENTICATED", "unknown registration token"));
    // Registering again (same machine id) keeps the device and issues a new device token.
    let device = this.byMachine.get(body.machineId);
    if (device) this.byToken.delete(device.deviceToken);
    else {
      device = {
        deviceId: randomUUID(),
        deviceToken: "",
        machineId: body.machineId,
        hostname: body.hostname,
        approved: this.options.autoApprove,
        registration: body,
        messages: [],
        counts: {},
        invalid: [],
        closes: [],
        link: null,
      };
      this.devices.set(device.deviceId, device);
      this.byMachine.set(body.machineId, device);
    }
    device.deviceToken = randomBytes(24).toString("base64url");
    device.registration = body;
    this.byToken.set(device.deviceToken, device);
    const response: RegisterResponse = {
      deviceId: device.deviceId,
      deviceToken: device.deviceToken,
      isApproved: device.approved,
    };
    reply(res, 201, response);
  }

  private onSocket(ws: import("ws").WebSocket, req: IncomingMessage): void {
    const auth = req.headers.authorization ?? "";
    const device = auth.startsWith("Bearer ") ? this.byToken.get(auth.slice(7)) : undefined;
    if (!device) {
      this.refused.push({ code: CLOSE_CODES.unauthenticated, reason: "unknown device token" });
      ws.close(CLOSE_CODES.unauthenticated, "unknown device token");
      return;
    }
    if (!device.approved) {
      device.closes.push({ code: CLOSE_CODES.notApproved, reason: "device is not approved" });
      ws.close(CLOSE_CODES.notApproved, "device is not approved");
      return;
    }
    // A second connection of the same device replaces the first, as the gateway does.
    device.link?.close(CLOSE_CODES.replaced, "replaced by a newer connection");
    const nonce = randomBytes(24).toString("base64url");
    const host = req.headers.host ?? "";
    device.link = new FakeLink(ws, device, {
      record: this.options.record,
      welcome: (hello) => {
        if (!helloProven(hello, device, nonce, host))
          return { close: CLOSE_CODES.unauthenticated, reason: "device identity not proven" };
        if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly number[]).includes(hello.protocolVersion)) {
          return {
            close: CLOSE_CODES.protocolVersion,
            reason: `protocol ${hello.protocolVersion} not accepted; accepted: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
          };
        }
        return {
          type: "welcome",
          deviceId: device.deviceId,
          protocolVersion: PROTOCOL_VERSION,
          serverVersion: "fake-0",
          statusIntervalMs: this.options.statusIntervalMs,
        };
      },
    });
    device.link.send({ type: "challenge", nonce, publicKey: device.registration.identity.publicKey });
  }
}

/** The hello is signed by the registered key over this link's challenge, device id, machine id and URL. */
function helloProven(hello: Hello, device: FakeDevice, nonce: string, host: string): boolean {
  const proof = hello.proof;
  if (!proof || proof.publicKey !== device.registration.identity.publicKey) return false;
  if (URL.canParse(proof.url) && new URL(proof.url).host !== host) return false;
  const text = helloProofText({ nonce, deviceId: device.deviceId, machineId: hello.machineId, url: proof.url });
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: proof.publicKey }, format: "jwk" });
    return verify(null, Buffer.from(text), key, Buffer.from(proof.signature, "base64url"));
  } catch {
    return false;
  }
}

function error(code: ErrorCode, message: string, details: ErrorBody["details"] = []): ErrorBody {
  return { error: message, code, details };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
