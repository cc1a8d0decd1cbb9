/**
 * Baseline for API latency: a bare node:http server answering every request
 * with the same JSON body of a given size (built once), keep-alive, nothing
 * else: no routing, no authentication, no database, no serialization.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "./ipc.ts";

const bytes = Number(process.argv[2] ?? 65_536);
const item = '{"id":"00000000-0000-4000-8000-000000000000","name":"tern-bench-1234","hostname":"tern-bench-1234"}';
const items: string[] = [];
let size = 2;
while (size + item.length + 1 <= bytes) {
  items.push(item);
  size += item.length + 1;
}
const body = Buffer.from(`[${items.join(",")}]`.padEnd(bytes, " "));
const http = createServer((_req, res) => {
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": body.length,
    "records-total": String(items.length),
  });
  res.end(body);
});
http.keepAliveTimeout = 60_000;
http.listen(0, "127.0.0.1", () => {
  serve({}, { port: (http.address() as AddressInfo).port, bytes: body.length });
});
