/**
 * A real HTTP receiver on 127.0.0.1 that verifies each delivery's signature with
 * the shared secret and answers from a script: a status, "hang" (never answer),
 * or a promise to wait for before answering 200.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { verifyWebhookSignature } from "../../src/notify/delivery/index.ts";

export type Reply = number | "hang" | { status: number; headers: Record<string, string> } | { waitFor: Promise<void> };

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  verified: ReturnType<typeof verifyWebhookSignature>;
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #script: Reply[] = [];

  constructor(readonly secret: string) {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const verified = verifyWebhookSignature({
          secret: this.secret,
          body,
          signature: req.headers["x-tern-signature"] as string | undefined,
          timestamp: req.headers["x-tern-timestamp"] as string | undefined,
        });
        this.received.push({ headers: req.headers, body, verified });
        // A receiver that cannot verify the signature must refuse the delivery.
        const reply: Reply = verified.ok ? (this.#script.shift() ?? 200) : 401;
        if (reply === "hang") return;
        if (typeof reply === "number") return void res.writeHead(reply).end("");
        if ("waitFor" in reply) return void reply.waitFor.then(() => res.writeHead(200).end(""));
        res.writeHead(reply.status, reply.headers).end("");
      });
    });
    this.#server.on("connection", (s) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
  }

  /** Answers for the next requests, in order; 200 after the script runs out. */
  script(...replies: Reply[]): this {
    this.#script = replies;
    return this;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks/tern`;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
