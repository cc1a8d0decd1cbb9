/**
 * Where the agent talks to the server. The server URL is the one given to
 * `register` (http or https, optionally with a base path); the device
 * websocket lives at `<server>/api/connect/ws` (ws or wss) and is opened with
 * `Authorization: Bearer <device token>`.
 */
import { AgentError } from "../errors.ts";

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
