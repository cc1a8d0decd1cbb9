/**
 * Baseline: a bare `ws` echo server on an http server, configured like the
 * device gateway (no compression, the protocol's message size limit), and
 * nothing else: no parsing, no validation, no database.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_MESSAGE_BYTES } from "@tern/protocol";
import { WebSocketServer } from "ws";
import { serve } from "./ipc.ts";

const http = createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
wss.on("connection", (ws) => {
  ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
});
http.listen(0, "127.0.0.1", () => {
  serve({ stats: () => ({ connections: wss.clients.size }) }, { port: (http.address() as AddressInfo).port });
});
