/**
 * Is the configured port free? When it is taken, is it a Tern server (its
 * /api/health and /api/version answer as one does) or something else?
 */
import { createServer } from "node:net";
import type { ServerConfig } from "../../config.ts";
import { type CheckResult, fail, ok } from "./check.ts";

/** Binds and releases host:port; the error when that fails. */
export function tryListen(port: number, host: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err) => resolve(err));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** The version a Tern server on host:port reports, or null when what answers there is not one. */
export async function ternServerAt(host: string, port: number): Promise<string | null> {
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  try {
    const res = await fetch(`${base}/api/version`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { server?: unknown; api?: unknown; protocol?: unknown };
    return typeof body.server === "string" && typeof body.protocol === "number" ? body.server : null;
  } catch {
    return null;
  }
}

export async function checkPort(config: ServerConfig): Promise<CheckResult> {
  const name = "port";
  const where = `${config.HOST}:${config.PORT}`;
  if (config.PORT === 0) return ok(name, "PORT=0: the system picks a free port at start");
  const err = await tryListen(config.PORT, config.HOST);
  if (!err) return ok(name, `${where} is free`);
  if (err.code === "EADDRINUSE") {
    const version = await ternServerAt(
      config.HOST === "0.0.0.0" || config.HOST === "::" ? "127.0.0.1" : config.HOST,
      config.PORT,
    );
    if (version) return ok(name, `${where} is in use by a running Tern server (version ${version})`);
    return fail(
      name,
      `${where} is in use by another process`,
      `stop it (ss -ltnp 'sport = :${config.PORT}' shows it) or set PORT to a free port`,
    );
  }
  if (err.code === "EACCES")
    return fail(name, `not allowed to listen on ${where}`, "use a port above 1023 or grant CAP_NET_BIND_SERVICE");
  if (err.code === "EADDRNOTAVAIL")
    return fail(name, `HOST ${config.HOST} is not an address of this machine`, "set HOST to one of its addresses");
  return fail(name, `cannot listen on ${where}: ${err.message}`, "check HOST and PORT");
}
