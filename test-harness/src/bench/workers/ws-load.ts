/**
 * Load generator for the bare ws baselines, in its own process: opens N
 * client connections, then either sends a status-sized message per
 * connection per interval and times each echo (latency), or keeps a window of
 * messages in flight on a few connections (throughput).
 */
import WebSocket from "ws";
import { mapLimit } from "../../simulator/limit.ts";
import { statusPayload } from "../payload.ts";
import { Samples } from "../stats.ts";
import { collect, serve } from "./ipc.ts";

const sockets: WebSocket[] = [];
const APPLY = Buffer.from('{"type":"apply",');
const ANSWER = JSON.stringify({
  type: "apply-result",
  id: "00000000-0000-4000-8000-000000000000",
  ok: true,
  appliedHash: "ab".repeat(32),
  rolledBack: false,
  drivers: [],
});
/** Per connection: send time of the message in flight (ms), 0 when none. */
let sentAt = new Float64Array(0);
let onEcho: (i: number) => void = () => {};
const base = process.hrtime.bigint();
const now = () => Number(process.hrtime.bigint() - base) / 1e6;

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 30_000 });
    const i = sockets.length;
    ws.once("open", () => resolve(ws));
    // Kept for the socket's life: a later error without a listener would crash the worker.
    ws.on("error", reject);
    ws.on("message", (data: Buffer) => {
      // An apply-shaped message from the server (broadcast baseline) is answered like a device would.
      if (data.length > APPLY.length && data.subarray(0, APPLY.length).equals(APPLY)) ws.send(ANSWER);
      else onEcho(i);
    });
    sockets.push(ws);
  });
}

async function connect(args: Record<string, unknown>) {
  const url = String(args.url);
  const count = Number(args.count);
  const t0 = now();
  let failed = 0;
  let firstError: string | null = null;
  await mapLimit(Array.from({ length: count }), Number(args.concurrency ?? 200), async () => {
    try {
      await open(url);
    } catch (err) {
      failed++;
      firstError ??= (err as Error).message;
    }
  });
  const open_ = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
  sentAt = new Float64Array(sockets.length);
  return { open: open_, failed, firstError, elapsedMs: now() - t0 };
}

/** Every connection sends once per interval at evenly spread phases; each echo's round trip is one sample. */
async function latency(args: Record<string, unknown>) {
  const intervalMs = Number(args.intervalMs);
  const durationMs = Number(args.durationMs);
  const payload = statusPayload(Number(args.tunnels ?? 4));
  const live = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
  const n = sockets.length;
  const samples = new Samples();
  let skipped = 0;
  sentAt.fill(0);
  onEcho = (i) => {
    const t = sentAt[i]!;
    if (t > 0) {
      samples.add(now() - t);
      sentAt[i] = 0;
    }
  };
  const t0 = now();
  let sent = 0;
  let due = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - t0;
      const target = Math.floor((Math.min(elapsed, durationMs) / intervalMs) * n);
      for (; due < target; due++) {
        const i = due % n;
        const ws = sockets[i]!;
        if (ws.readyState !== WebSocket.OPEN) continue;
        // Still waiting for the previous echo: the round trip exceeds the interval; counted, not queued.
        if (sentAt[i]! > 0) {
          skipped++;
          continue;
        }
        sentAt[i] = now();
        ws.send(payload);
        sent++;
      }
      if (elapsed >= durationMs) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  // Give the last echoes a moment; what has not come back by then is counted as lost.
  const waitUntil = now() + 2000;
  while (sentAt.some((t) => t > 0) && now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
  const lost = sentAt.filter((t) => t > 0).length;
  onEcho = () => {};
  return { live, sent, received: samples.count, skipped, lost, payloadBytes: Buffer.byteLength(payload), ...samples.summary() };
}

/** `window` messages in flight on each of the first `connections` sockets; counts echoes after a warm-up. */
async function throughput(args: Record<string, unknown>) {
  const k = Math.min(Number(args.connections), sockets.length);
  const window = Number(args.window);
  const warmupMs = Number(args.warmupMs ?? 1000);
  const durationMs = Number(args.durationMs);
  const payload = statusPayload(Number(args.tunnels ?? 4));
  let running = true;
  let counted = 0;
  let counting = false;
  onEcho = (i) => {
    if (counting) counted++;
    if (running) sockets[i]!.send(payload);
  };
  for (let i = 0; i < k; i++) for (let w = 0; w < window; w++) sockets[i]!.send(payload);
  await new Promise((r) => setTimeout(r, warmupMs));
  counting = true;
  const t0 = now();
  await new Promise((r) => setTimeout(r, durationMs));
  counting = false;
  const elapsed = now() - t0;
  running = false;
  await new Promise((r) => setTimeout(r, 200));
  onEcho = () => {};
  const bytes = Buffer.byteLength(payload);
  return {
    connections: k,
    window,
    messages: counted,
    elapsedMs: elapsed,
    msgPerSec: counted / (elapsed / 1000),
    payloadBytes: bytes,
  };
}

serve(
  {
    connect,
    latency,
    throughput,
    memory: () => {
      collect();
      const m = process.memoryUsage();
      return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, sockets: sockets.length };
    },
    close: async () => {
      for (const ws of sockets) ws.terminate();
      sockets.length = 0;
      return {};
    },
  },
  { pid: process.pid },
);
