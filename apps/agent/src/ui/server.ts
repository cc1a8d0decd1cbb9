/** Serves the troubleshooting page on 127.0.0.1 (default) or a configured LAN address, never on all addresses. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { IPv4 } from "@tern/protocol";
import { AgentError } from "../errors.ts";
import type { UiAppOptions } from "./app.ts";

export interface UiServerOptions extends UiAppOptions {
  /** Address to bind: 127.0.0.1 by default, or a LAN address of the router. */
  host?: string;
  /** TCP port; 0 picks a free one. Default 8088. */
  port?: number;
}

export interface UiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const host = options.host ?? "127.0.0.1";
  if (host === "0.0.0.0")
    throw new AgentError("USAGE", "bind the page to 127.0.0.1 or a LAN address, not to every address", "ui.host");
  if (!IPv4.safeParse(host).success) throw new AgentError("USAGE", `${JSON.stringify(host)} is not an IPv4 address`, "ui.host");
  // The page (Hono) and its Node adapter are loaded by the first request: most agents are never looked at. The
  // adapter reads Node's global Request when it loads, which loads Node's built-in undici: about 6 MiB more
  // resident for an agent that nobody visits (agent-footprint bench, docs/bench.md). So the socket is a plain
  // node:http server until then.
  let listener: Promise<Listener> | undefined;
  const load = () =>
    Promise.all([import("@hono/node-server"), import("./app.ts")]).then(([{ getRequestListener }, { createUiApp }]) => {
      const app = createUiApp(options);
      return getRequestListener((req) => app.fetch(req), { hostname: host });
    });
  const server = createServer((req, res) => {
    listener ??= load();
    listener.then(
      (handle) => handle(req, res),
      (err: unknown) => {
        listener = undefined; // the next request tries again
        res.writeHead(500, { "content-type": "text/plain" }).end(`troubleshooting page unavailable: ${String(err)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8088, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
