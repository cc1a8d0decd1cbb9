/**
 * A bare websocket client for the device endpoint, for tests that send what a
 * well-behaved agent never would (wrong token, malformed JSON, oversized
 * frames, another device's ids). Records every message and how it closed.
 */
import { type Challenge, helloProofText, PROTOCOL_VERSION, type ServerMessage } from "@tern/protocol";
import { type SimKey, signText } from "@tern/test-harness/src/simulator/index.ts";
import WebSocket from "ws";

/** Whose key signs the hello: with it, a `hello` sent without `proof` gets one (the link's challenge). */
export interface RawIdentity {
  id: string;
  key: SimKey;
}

export interface RawLink {
  ws: WebSocket;
  /** The server's challenge (the first message). */
  challenge: Challenge;
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

export type UpgradeRefusal = {
  status: number;
  body: { error: string; code: string };
  /** The Retry-After header, when the server sent one. */
  retryAfter?: string | undefined;
};

/**
 * Opens the websocket and resolves once the server's challenge arrived; rejects with the HTTP status
 * and JSON body when the upgrade is refused.
 */
export function openRawLink(serverUrl: string, token: string | null, identity?: RawIdentity): Promise<RawLink> {
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
    challenge: { type: "challenge", nonce: "", publicKey: null },
    messages,
    closed,
    send(message) {
      const m = message as { type?: string; machineId?: string; proof?: unknown };
      if (identity && typeof m === "object" && m.type === "hello" && m.proof === undefined) {
        const text = helloProofText({ nonce: link.challenge.nonce, deviceId: identity.id, machineId: m.machineId ?? "", url });
        m.proof = { publicKey: identity.key.publicKey, url, signature: signText(identity.key.privateKey, text) };
      }
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
    ws.once("open", () => {
      link.next("challenge").then((c) => {
        link.challenge = c;
        resolve(link);
      }, reject);
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () =>
        reject({
          status: res.statusCode ?? 0,
          body: JSON.parse(body || "{}"),
          retryAfter: res.headers["retry-after"],
        } satisfies UpgradeRefusal),
      );
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
