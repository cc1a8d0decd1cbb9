/** Serves the troubleshooting page on 127.0.0.1 (default) or a configured LAN address, never on all addresses. */
import { type ServerType, serve } from "@hono/node-server";
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

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const host = options.host ?? "127.0.0.1";
  if (host === "0.0.0.0")
    throw new AgentError("USAGE", "bind the page to 127.0.0.1 or a LAN address, not to every address", "ui.host");
  if (!IPv4.safeParse(host).success) throw new AgentError("USAGE", `${JSON.stringify(host)} is not an IPv4 address`, "ui.host");
  // The page (Hono, about 2 MiB of heap) is loaded by its first request: most agents are never looked at.
  let app: Promise<{ fetch: (req: Request) => Response | Promise<Response> }> | undefined;
  const fetch = async (req: Request) => {
    app ??= import("./app.ts").then((m) => m.createUiApp(options));
    return (await app).fetch(req);
  };
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch, hostname: host, port: options.port ?? 8088 }, () => resolve(s));
    s.once("error", reject);
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : (options.port ?? 8088);
  return {
    url: `http://${host}:${port}`,
    port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
