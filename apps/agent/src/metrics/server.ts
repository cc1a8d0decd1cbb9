/**
 * The local HTTP endpoint Prometheus scrapes: GET /metrics, nothing else.
 * With a token it needs `Authorization: Bearer <token>`; the agent passes one
 * whenever it listens on anything but a loopback address.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** True for 127.0.0.0/8, ::1 and localhost: addresses no other host can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./i.test(host);
}

export async function serveMetrics(
  registry: Registry,
  host: string,
  port: number,
  token?: string,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: only GET /metrics\n");
      return;
    }
    if (token) {
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      if (!timingSafeEqual(digest(given), digest(token))) {
        res
          .writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" })
          .end("metrics need Authorization: Bearer <metrics-token>\n");
        return;
      }
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
