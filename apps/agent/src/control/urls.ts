/**
 * Where the agent talks to the server. The server URL is the one given to
 * `register` (http or https, optionally with a base path); the device
 * websocket lives at `<server>/api/connect/ws` (ws or wss) and is opened with
 * `Authorization: Bearer <device token>`.
 *
 * Transport: https/wss by default. Plain http/ws carries the registration
 * token, the device token and the configs (PSKs) readable to anyone on the
 * path, so it is refused unless the server is on this host (loopback) or the
 * operator said `--insecure`.
 */
import { isIP } from "node:net";
import { AgentError } from "../errors.ts";

/** True for localhost and the loopback addresses (127.0.0.0/8, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}

/** Refuses an unencrypted server URL that is not on this host, unless `insecure`; names the flag. */
export function checkServerTransport(server: string, insecure: boolean): void {
  const url = base(server);
  if (url.protocol === "https:" || insecure || isLoopbackHost(url.hostname)) return;
  throw new AgentError(
    "USAGE",
    `refusing the unencrypted server ${url.origin}: tokens and configs (with their pre-shared keys) would cross the network in clear. Use https:// (with --ca-file PATH for a private CA), or pass --insecure to allow it anyway`,
  );
}

function base(server: string): URL {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new AgentError("USAGE", `server URL ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new AgentError("USAGE", `server URL must be http:// or https://, got ${url.protocol}`);
  url.search = "";
  url.hash = "";
  return url;
}

export function registerUrl(server: string): string {
  const url = base(server);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/api/connect/register`;
  return url.toString();
}

export function deviceWebsocketUrl(server: string): string {
  const url = base(server);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/api/connect/ws`;
  return url.toString();
}
