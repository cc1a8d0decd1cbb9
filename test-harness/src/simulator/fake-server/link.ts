/** One device websocket on the fake server: validation, recording, waiting for messages. */
import { CLOSE_CODES, DeviceMessage, type Hello, type ServerMessage, type Welcome } from "@tern/protocol";
import type { WebSocket } from "ws";
import type { FakeDevice } from "./server.ts";

export interface InboundWaiter {
  type: DeviceMessage["type"];
  filter: ((m: DeviceMessage) => boolean) | undefined;
  resolve: (m: DeviceMessage) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export interface LinkOptions {
  record: boolean;
  /** The welcome to send for a hello, or a close code and reason to refuse it. */
  welcome: (hello: Hello) => Welcome | { close: number; reason: string };
}

export class FakeLink {
  welcomed = false;
  private alive = true;
  private readonly waiters = new Set<InboundWaiter>();

  constructor(
    private readonly ws: WebSocket,
    private readonly device: FakeDevice,
    private readonly options: LinkOptions,
  ) {
    ws.on("message", (data, isBinary) => this.onMessage(isBinary ? "<binary>" : data.toString()));
    ws.on("pong", () => {
      this.alive = true;
    });
    ws.on("close", (code, reason) => {
      device.closes.push({ code, reason: reason.toString() });
      if (device.link === this) device.link = null;
      for (const w of this.waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`device ${device.deviceId} disconnected (${code}) while waiting for ${w.type}`));
      }
      this.waiters.clear();
    });
  }

  send(message: ServerMessage): void {
    this.ws.send(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  /** Drops the connection when the previous ping went unanswered, then pings again. */
  heartbeat(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  waitFor(type: DeviceMessage["type"], timeoutMs: number, filter?: (m: DeviceMessage) => boolean): Promise<DeviceMessage> {
    return new Promise((resolve, reject) => {
      const waiter: InboundWaiter = {
        type,
        filter,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`fake server: no ${type} from ${this.device.deviceId} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private onMessage(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.reject(text, "not JSON");
      return;
    }
    const parsed = DeviceMessage.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.reject(text, `${issue?.path.join(".")}: ${issue?.message}`);
      return;
    }
    const msg = parsed.data;
    if (!this.welcomed && msg.type !== "hello") {
      this.reject(text, `${msg.type} before hello`);
      return;
    }
    const d = this.device;
    d.counts[msg.type] = (d.counts[msg.type] ?? 0) + 1;
    if (this.options.record) d.messages.push(msg);
    if (msg.type === "hello") {
      const answer = this.options.welcome(msg);
      if ("close" in answer) {
        this.close(answer.close, answer.reason);
        return;
      }
      this.welcomed = true;
      this.send(answer);
    }
    for (const w of this.waiters) {
      if (w.type !== msg.type || (w.filter && !w.filter(msg))) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.resolve(msg);
    }
  }

  private reject(text: string, reason: string): void {
    this.device.invalid.push({ text: text.slice(0, 500), reason });
    this.send({ type: "error", code: String(CLOSE_CODES.badMessage), message: `bad message: ${reason}` });
  }
}
