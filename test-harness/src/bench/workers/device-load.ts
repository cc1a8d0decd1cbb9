/**
 * Raw device links for the server benchmarks, in their own process: each is
 * one device of the benchmark fleet (its token, machine id and 4 real tunnel
 * ids from server/fleet-plan.ts) speaking the protocol with a bare `ws`
 * client: hello, welcome, apply → apply-result (the simulator's own answer),
 * and `status` messages built by the simulator's code.
 *
 * Timing a status: the device sends it and right after it a websocket ping.
 * The server's `ws` reads frames in order and runs the status handler (parse,
 * validation, live state, ingest buffer — all synchronous) before it reads
 * the ping and answers pong, so status → pong is "sent until ingested in
 * memory" plus one loopback round trip: the same thing the bare echo
 * baseline times (message → echo).
 */
import { type Apply, helloProofText, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, ServerMessage } from "@tern/protocol";
import WebSocket from "ws";
import { simulateApply } from "../../simulator/apply.ts";
import { signText } from "../../simulator/device-key.ts";
import { hostname, interfaceStates } from "../../simulator/identity.ts";
import { mapLimit } from "../../simulator/limit.ts";
import { buildStatus, tunnelReports } from "../../simulator/status.ts";
import { benchKey, benchMachineId, deviceId, deviceToken, FLEET_PREFIX, tunnelIdsOf } from "../server/fleet-plan.ts";
import { Samples } from "../stats.ts";
import { collect, serve } from "./ipc.ts";

interface Link {
  index: number;
  ws: WebSocket;
  ready: boolean;
  appliedHash: string | null;
  payload: string;
  /** Send times of the pings in flight, oldest first. */
  pings: number[];
  applies: number;
}

const links: Link[] = [];
const base = process.hrtime.bigint();
const now = () => Number(process.hrtime.bigint() - base) / 1e6;
let onPong: (link: Link, rtt: number) => void = () => {};
let fleetSize = 0;
let errors = 0;

function statusPayload(link: Link): string {
  const status = buildStatus({
    appliedHash: link.appliedHash,
    applying: false,
    tunnels: tunnelReports(
      tunnelIdsOf(link.index, fleetSize),
      { fleet: { loss: 0.5, rtt: 23.4, jitter: 1.2 }, fleetSince: 0, device: undefined, deviceSince: 0, perTunnel: undefined },
      0,
    ),
    interfaces: interfaceStates(link.index, 3_600_000, undefined),
    bgp: null,
    vrrp: [],
    uptimeSeconds: 3600,
  });
  return JSON.stringify(status);
}

function open(url: string, secret: string, index: number): Promise<Link> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${deviceToken(secret, index)}` },
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: 60_000,
    });
    const link: Link = { index, ws, ready: false, appliedHash: null, payload: "", pings: [], applies: 0 };
    ws.on("message", (data) => {
      const msg = ServerMessage.safeParse(JSON.parse(data.toString()));
      if (!msg.success) return;
      if (msg.data.type === "challenge") {
        // The hello signed with the device key over the server's challenge (protocol 2).
        const key = benchKey(secret, index);
        const machineId = benchMachineId(index);
        const text = helloProofText({ nonce: msg.data.nonce, deviceId: deviceId(index), machineId, url });
        ws.send(
          JSON.stringify({
            type: "hello",
            protocolVersion: PROTOCOL_VERSION,
            agentVersion: "0.1.0-bench",
            machineId,
            hostname: hostname(FLEET_PREFIX, index),
            appliedHash: null,
            proof: { publicKey: key.publicKey, url, signature: signText(key.privateKey, text) },
          }),
        );
      } else if (msg.data.type === "welcome") {
        link.ready = true;
        link.payload = statusPayload(link);
        resolve(link);
      } else if (msg.data.type === "apply") {
        const apply = msg.data as Apply;
        const result = simulateApply(apply.id, apply.config, link.appliedHash, null);
        link.appliedHash = result.appliedHash;
        link.applies++;
        link.payload = statusPayload(link);
        ws.send(JSON.stringify(result));
      }
    });
    ws.on("pong", () => {
      const sent = link.pings.shift();
      if (sent !== undefined) onPong(link, now() - sent);
    });
    ws.on("error", (err) => {
      errors++;
      reject(err);
    });
    ws.on("close", (code, reason) => {
      link.ready = false;
      reject(new Error(`closed ${code} ${reason.toString()}`));
    });
    links.push(link);
  });
}

async function connect(args: Record<string, unknown>) {
  fleetSize = Number(args.fleet);
  const from = Number(args.from ?? 0);
  const count = Number(args.count);
  const t0 = now();
  let failed = 0;
  let firstError: string | null = null;
  await mapLimit(
    Array.from({ length: count }, (_, k) => from + k),
    Number(args.concurrency ?? 100),
    async (index) => {
      try {
        await open(String(args.url), String(args.secret), index);
      } catch (err) {
        failed++;
        firstError ??= (err as Error).message;
      }
    },
  );
  return { ready: links.filter((l) => l.ready).length, failed, firstError, elapsedMs: now() - t0 };
}

function sendTimed(link: Link): void {
  link.pings.push(now());
  link.ws.send(link.payload);
  link.ws.ping();
}

/** Every link sends a status (and a ping) once per interval at evenly spread phases; each pong is one sample. */
async function latency(args: Record<string, unknown>) {
  const intervalMs = Number(args.intervalMs);
  const durationMs = Number(args.durationMs);
  const live = links.filter((l) => l.ready);
  const n = live.length;
  const samples = new Samples();
  let skipped = 0;
  let sent = 0;
  for (const l of live) l.pings.length = 0;
  onPong = (_, rtt) => samples.add(rtt);
  const t0 = now();
  let due = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - t0;
      const target = Math.floor((Math.min(elapsed, durationMs) / intervalMs) * n);
      for (; due < target; due++) {
        const link = live[due % n]!;
        if (!link.ready) continue;
        if (link.pings.length > 0) {
          skipped++;
          continue;
        }
        sendTimed(link);
        sent++;
      }
      if (elapsed >= durationMs) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  const waitUntil = now() + 3000;
  while (live.some((l) => l.pings.length > 0) && now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
  const lost = live.reduce((a, l) => a + l.pings.length, 0);
  onPong = () => {};
  return {
    live: n,
    sent,
    received: samples.count,
    skipped,
    lost,
    payloadBytes: Buffer.byteLength(live[0]?.payload ?? ""),
    ...samples.summary(),
  };
}

/** `window` statuses (each followed by a ping) in flight on every link; counts pongs after a warm-up. */
async function throughput(args: Record<string, unknown>) {
  const window = Number(args.window);
  const warmupMs = Number(args.warmupMs ?? 1000);
  const durationMs = Number(args.durationMs);
  const live = links.filter((l) => l.ready);
  let running = true;
  let counting = false;
  let counted = 0;
  let sent = 0;
  let firstSendAt = 0;
  let lastSendAt = 0;
  onPong = (link) => {
    if (counting) counted++;
    if (running && link.ready) {
      sendTimed(link);
      sent++;
    }
  };
  firstSendAt = now();
  for (const l of live) {
    l.pings.length = 0;
    for (let w = 0; w < window; w++) {
      sendTimed(l);
      sent++;
    }
  }
  await new Promise((r) => setTimeout(r, warmupMs));
  counting = true;
  const t0 = now();
  await new Promise((r) => setTimeout(r, durationMs));
  counting = false;
  const elapsed = now() - t0;
  running = false;
  lastSendAt = now();
  const waitUntil = now() + 10_000;
  while (live.some((l) => l.pings.length > 0) && now() < waitUntil) await new Promise((r) => setTimeout(r, 20));
  onPong = () => {};
  return {
    links: live.length,
    window,
    messages: counted,
    elapsedMs: elapsed,
    msgPerSec: counted / (elapsed / 1000),
    sent,
    sendingMs: lastSendAt - firstSendAt,
    payloadBytes: Buffer.byteLength(live[0]?.payload ?? ""),
  };
}

serve(
  {
    connect,
    latency,
    throughput,
    stats: () => ({
      links: links.length,
      ready: links.filter((l) => l.ready).length,
      applies: links.reduce((a, l) => a + l.applies, 0),
      errors,
    }),
    memory: () => {
      collect();
      const m = process.memoryUsage();
      return { rssBytes: m.rss, heapUsedBytes: m.heapUsed };
    },
    close: async () => {
      for (const l of links) l.ws.terminate();
      links.length = 0;
      return {};
    },
  },
  { pid: process.pid },
);
