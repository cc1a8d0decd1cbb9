/**
 * Answers Tern probes on the local tunnel loopbacks (one socket per address,
 * so the agent never answers on a WAN address). An address not configured yet
 * (the links driver adds it) is retried every few seconds.
 */
import { createSocket, type Socket } from "node:dgram";
import type { Logger } from "../drivers/driver.ts";
import { decodeProbe, encodeProbe } from "./udp-echo-codec.ts";

const RETRY_MS = 2000;

export class UdpEchoResponder {
  private readonly sockets = new Map<string, Socket>();
  private readonly wanted = new Set<string>();
  private retry: NodeJS.Timeout | null = null;
  /** Requests answered since start. */
  answered = 0;

  constructor(
    private readonly port: number,
    private readonly log?: Logger,
  ) {}

  /** Answers on exactly `addresses` from now on. */
  setAddresses(addresses: readonly string[]): void {
    this.wanted.clear();
    for (const a of addresses) this.wanted.add(a);
    for (const [addr, sock] of this.sockets)
      if (!this.wanted.has(addr)) {
        sock.close();
        this.sockets.delete(addr);
      }
    this.bindMissing();
  }

  private bindMissing(): void {
    let missing = false;
    for (const addr of this.wanted) {
      if (this.sockets.has(addr)) continue;
      missing = true;
      const sock = createSocket({ type: "udp4", reuseAddr: true });
      this.sockets.set(addr, sock);
      sock.on("message", (msg, rinfo) => {
        const p = decodeProbe(msg);
        if (p?.type !== "request") return;
        this.answered++;
        sock.send(encodeProbe({ ...p, type: "reply" }), rinfo.port, rinfo.address);
      });
      sock.on("error", (err) => {
        this.log?.debug("probe responder bind failed, will retry", { address: addr, error: err.message });
        if (this.sockets.get(addr) === sock) this.sockets.delete(addr);
        sock.close();
      });
      sock.bind(this.port, addr);
    }
    if (this.retry) clearTimeout(this.retry);
    this.retry = missing || this.wanted.size > 0 ? setTimeout(() => this.bindMissing(), RETRY_MS) : null;
    this.retry?.unref();
  }

  stop(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.wanted.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}
