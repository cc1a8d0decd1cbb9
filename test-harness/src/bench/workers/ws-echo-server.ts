/**
 * Baseline: a bare `ws` echo server on an http server, configured like the
 * device gateway (no compression, the protocol's message size limit), and
 * nothing else: no parsing, no validation, no database. `broadcast` sends one
 * config-sized message to every connection and times the answers (the bare
 * floor of a job fan-out); answers are recognised by their first bytes.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_MESSAGE_BYTES } from "@tern/protocol";
import { WebSocketServer } from "ws";
import { Samples } from "../stats.ts";
import { serve } from "./ipc.ts";

const ANSWER = Buffer.from('{"type":"apply-result"');
let onAnswer: () => void = () => {};

const http = createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
wss.on("connection", (ws) => {
  ws.on("message", (data, isBinary) => {
    const buf = data as Buffer;
    if (buf.length >= ANSWER.length && buf.subarray(0, ANSWER.length).equals(ANSWER)) onAnswer();
    else ws.send(data, { binary: isBinary });
  });
});

/** Sends `bytes` of apply-shaped JSON to every connection; resolves when each has answered (or after the time-out). */
function broadcast(args: Record<string, unknown>) {
  const bytes = Number(args.bytes);
  const timeoutMs = Number(args.timeoutMs ?? 120_000);
  const head = '{"type":"apply","id":"00000000-0000-4000-8000-000000000000","pad":"';
  const payload = `${head}${"x".repeat(Math.max(0, bytes - head.length - 2))}"}`;
  const clients = [...wss.clients];
  const samples = new Samples();
  const t0 = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
  return new Promise((resolve) => {
    let sentMs = 0;
    const done = () => {
      onAnswer = () => {};
      clearTimeout(timer);
      resolve({
        connections: clients.length,
        answered: samples.count,
        sentMs,
        allAnsweredMs: ms(),
        payloadBytes: payload.length,
        ...samples.summary(),
      });
    };
    const timer = setTimeout(done, timeoutMs);
    onAnswer = () => {
      samples.add(ms());
      if (samples.count === clients.length) done();
    };
    for (const ws of clients) ws.send(payload);
    sentMs = ms();
  });
}

http.listen(0, "127.0.0.1", () => {
  serve({ stats: () => ({ connections: wss.clients.size }), broadcast }, { port: (http.address() as AddressInfo).port });
});
