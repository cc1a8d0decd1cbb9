/**
 * Probes one Tern agent over UDP from a local tunnel loopback: one request per
 * interval, RTT from the monotonic clock of the sender, answers matched by
 * session and sequence so duplicates are dropped and late answers (after the
 * time-out, already counted lost) are ignored.
 */
import { randomInt } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { decodeProbe, encodeProbe } from "./udp-echo-codec.ts";

export interface ProbeSessionOptions {
  intervalMs: number;
  timeoutMs: number;
  onResult(target: string, seq: number, rttMs: number | null): void;
}

export interface ProbeSession {
  readonly id: string;
  start(): void;
  stop(): void;
}

const REBIND_EVERY = 4;

export class UdpProbeSession implements ProbeSession {
  readonly id: string;
  private socket: Socket | null = null;
  private bound = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly session = randomInt(1, 2 ** 32 - 1);
  private seq = 0;
  private ticks = 0;
  private readonly pending = new Map<number, bigint>();

  constructor(
    private readonly source: string,
    private readonly target: string,
    private readonly port: number,
    private readonly options: ProbeSessionOptions,
  ) {
    this.id = `udp ${source} → ${target}:${port}`;
  }

  start(): void {
    this.open();
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.tick();
  }

  private open(): void {
    const sock = createSocket("udp4");
    this.socket = sock;
    this.bound = false;
    sock.on("message", (msg) => this.onMessage(msg));
    sock.on("error", () => {
      // Source address not configured yet (EADDRNOTAVAIL): retried on a later tick.
      if (this.socket === sock) this.socket = null;
      this.bound = false;
      try {
        sock.close();
      } catch {
        // already closed
      }
    });
    sock.bind(0, this.source, () => {
      this.bound = true;
    });
  }

  private tick(): void {
    const now = process.hrtime.bigint();
    const timeoutNs = BigInt(this.options.timeoutMs) * 1_000_000n;
    for (const [seq, sentAt] of this.pending)
      if (now - sentAt > timeoutNs) {
        this.pending.delete(seq);
        this.options.onResult(this.target, seq, null);
      }
    this.ticks++;
    if (!this.socket && this.ticks % REBIND_EVERY === 0) this.open();
    const sock = this.socket;
    if (!sock || !this.bound) return;
    const seq = ++this.seq;
    this.pending.set(seq, now);
    // A send error (no route) leaves the probe pending: it times out as lost.
    sock.send(encodeProbe({ type: "request", session: this.session, seq, timestampNs: now }), this.port, this.target, () => {});
  }

  private onMessage(msg: Buffer): void {
    const now = process.hrtime.bigint();
    const p = decodeProbe(msg);
    if (p?.type !== "reply" || p.session !== this.session) return;
    const sentAt = this.pending.get(p.seq);
    if (sentAt === undefined) return; // duplicate, or late and already counted lost
    this.pending.delete(p.seq);
    const rttMs = Number(now - sentAt) / 1e6;
    this.options.onResult(this.target, p.seq, rttMs <= this.options.timeoutMs ? rttMs : null);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    try {
      this.socket?.close();
    } catch {
      // already closed
    }
    this.socket = null;
    this.pending.clear();
  }
}
