/**
 * A bare websocket client for the device endpoint, for tests that send what a
 * well-behaved agent never would (wrong token, malformed JSON, oversized
 * frames, another device's ids). Records every message and how it closed.
 */
import { PROTOCOL_VERSION, type ServerMessage } from "@tern/protocol";
import WebSocket from "ws";

export interface RawLink {
  ws: WebSocket;
  messages: ServerMessage[];
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** Waits for a server message of `type` (received earlier counts), optionally matching `pred`. */
  next<T extends ServerMessage["type"]>(
    type: T,
    pred?: (m: Extract<ServerMessage, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<ServerMessage, { type: T }>>;
}

export type UpgradeRefusal = { status: number; body: { error: string; code: string } };

/** Opens the websocket; rejects with the HTTP status and JSON body when the upgrade is refused. */
export function openRawLink(serverUrl: string, token: string | null): Promise<RawLink> {
  const url = `${serverUrl.replace(/^http/, "ws")}/api/connect/ws`;
  const ws = new WebSocket(url, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    maxPayload: 4 * 1024 * 1024,
  });
  const messages: ServerMessage[] = [];
  const waiters: (() => void)[] = [];
  ws.on("message", (data) => {
    messages.push(JSON.parse(String(data)) as ServerMessage);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  const link: RawLink = {
    ws,
    messages,
    closed,
    send(message) {
      ws.send(typeof message === "string" ? message : JSON.stringify(message));
    },
    async next(type, pred = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find((m) => m.type === type && pred(m as never));
        if (found) return found as never;
        if (Date.now() > deadline) throw new Error(`no ${type} message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(link));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => reject({ status: res.statusCode ?? 0, body: JSON.parse(body || "{}") } satisfies UpgradeRefusal));
    });
    ws.once("error", (err) => reject(err));
  });
}

export function helloFor(machineId: string, fields: Partial<{ protocolVersion: number; appliedHash: string | null }> = {}) {
  return {
    type: "hello",
    protocolVersion: fields.protocolVersion ?? PROTOCOL_VERSION,
    agentVersion: "raw-test",
    machineId,
    hostname: "raw-test",
    appliedHash: fields.appliedHash ?? null,
  };
}
