/**
 * A webhook receiver as an admin would run one: an HTTP endpoint on the
 * host's loopback (the server runs there too) that checks every delivery the
 * documented way (docs/server-compile.md "Verifying a webhook"):
 * `x-tern-signature: sha256=<hex HMAC-SHA256 of the raw body with the shared
 * secret>`, compared in constant time, and `x-tern-timestamp` equal to the
 * signed `sentAt` and within 300 s of now.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { WebhookPayload } from "@tern/protocol";
import type { z } from "zod";

export interface Delivery {
  /** Signature, timestamp and body all check out. */
  verified: boolean;
  reason: string;
  headers: Record<string, string>;
  payload: z.infer<typeof WebhookPayload> | null;
  receivedAt: number;
}

export class WebhookReceiver {
  readonly secret = randomBytes(24).toString("base64url");
  readonly deliveries: Delivery[] = [];
  private server: Server | null = null;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/tern-webhook`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        this.deliveries.push({ ...this.check(raw, headers), headers, receivedAt: Date.now() });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  /** Verified deliveries of one event about one notification type. */
  matching(event: string, eventType?: string): Delivery[] {
    return this.deliveries.filter(
      (d) => d.verified && d.payload?.event === event && (!eventType || d.payload.notification?.eventType === eventType),
    );
  }

  private check(raw: Buffer, headers: Record<string, string>): Omit<Delivery, "headers" | "receivedAt"> {
    const expected = Buffer.from(`sha256=${createHmac("sha256", this.secret).update(raw).digest("hex")}`);
    const given = Buffer.from(headers["x-tern-signature"] ?? "");
    const parsed = WebhookPayload.safeParse(safeJson(raw.toString("utf8")));
    const payload = parsed.success ? parsed.data : null;
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { verified: false, reason: "bad signature", payload };
    if (!payload) return { verified: false, reason: "body is not a WebhookPayload", payload };
    const ts = Number(headers["x-tern-timestamp"]);
    if (!Number.isFinite(ts) || Math.abs(Date.now() / 1000 - ts) > 300)
      return { verified: false, reason: "stale timestamp", payload };
    if (Math.floor(Date.parse(payload.sentAt) / 1000) !== ts)
      return { verified: false, reason: "timestamp differs from the signed sentAt", payload };
    return { verified: true, reason: "", payload };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
