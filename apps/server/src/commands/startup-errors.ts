/**
 * Turns what fails at start-up (a busy port, an unreachable database, a locked
 * data directory, an unreadable key …) into one CliError line with the fix.
 * Anything not recognised still becomes one line, pointing at --debug.
 */
import type { ServerConfig } from "../config.ts";
import { DataDirPermissionsError } from "../data-dir/permissions.ts";
import { DataDirLockedError } from "../db/data-dir-lock.ts";
import { SERVER_KEY_FILE } from "../secrets/server-key.ts";
import { CliError } from "./cli-error.ts";

type Coded = Error & { code?: string; syscall?: string; address?: string; port?: number; path?: string };

/** The error and every error it wraps (cause chains, AggregateError of a dual-stack connect). */
function* chain(err: unknown, depth = 0): Generator<Coded> {
  if (!(err instanceof Error) || depth > 8) return;
  yield err as Coded;
  if (err instanceof AggregateError) for (const e of err.errors) yield* chain(e, depth + 1);
  yield* chain(err.cause, depth + 1);
}

/** host:port/database of a PostgreSQL URL, never its password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || "5432"}${u.pathname || "/"}`;
  } catch {
    return "DATABASE_URL";
  }
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
]);

/** A PostgreSQL connection failure as a CliError, or null when `err` is something else. */
export function databaseError(err: unknown, config: Pick<ServerConfig, "DATABASE_URL">): CliError | null {
  if (!config.DATABASE_URL) return null;
  const where = describeDatabaseUrl(config.DATABASE_URL);
  for (const e of chain(err)) {
    if (e.code && NETWORK_CODES.has(e.code))
      return new CliError(
        `cannot reach the PostgreSQL database at ${where} (${e.code})`,
        "check DATABASE_URL and that PostgreSQL is running and accepts connections from this host",
        1,
        { cause: err },
      );
    if (e.code === "3D000")
      return new CliError(
        `the database named in DATABASE_URL does not exist (${where})`,
        "create it (createdb) or fix DATABASE_URL",
        1,
        {
          cause: err,
        },
      );
    if (e.code === "28P01" || e.code === "28000")
      return new CliError(
        `PostgreSQL refused the login of DATABASE_URL (${where}): ${e.message}`,
        "fix the user and password in DATABASE_URL or the server's pg_hba.conf",
        1,
        { cause: err },
      );
    if (e.message?.includes("timeout exceeded when trying to connect"))
      return new CliError(
        `connecting to the PostgreSQL database at ${where} timed out`,
        "check DATABASE_URL, the network and firewall",
        1,
        {
          cause: err,
        },
      );
  }
  return null;
}

/** Every start-up failure as one line with a fix. */
export function startupError(
  err: unknown,
  config: Pick<ServerConfig, "PORT" | "HOST" | "DATABASE_URL" | "TERN_DATA_DIR">,
): CliError {
  if (err instanceof CliError) return err;
  // Its message already ends with the chmod command that fixes it.
  if (err instanceof DataDirPermissionsError) return new CliError(err.message, undefined, 1, { cause: err });
  if (err instanceof DataDirLockedError)
    return new CliError(err.message, `stop that server first (kill ${err.pid}), or set TERN_DATA_DIR to another directory`, 1, {
      cause: err,
    });
  const db = databaseError(err, config);
  if (db) return db;
  for (const e of chain(err)) {
    if (e.syscall === "listen" && e.code === "EADDRINUSE")
      return new CliError(
        `port ${config.PORT} on ${config.HOST} is already in use by another process`,
        `stop that process (ss -ltnp 'sport = :${config.PORT}' shows it) or set PORT to a free port`,
        1,
        { cause: err },
      );
    if (e.syscall === "listen" && e.code === "EACCES")
      return new CliError(
        `not allowed to listen on port ${config.PORT}`,
        "use a port above 1023 (PORT=3000 behind a reverse proxy) or grant the service CAP_NET_BIND_SERVICE",
        1,
        { cause: err },
      );
    if (e.syscall === "listen" && e.code === "EADDRNOTAVAIL")
      return new CliError(
        `HOST ${config.HOST} is not an address of this machine`,
        "set HOST to one of its addresses (or 0.0.0.0)",
        1,
        {
          cause: err,
        },
      );
    if ((e.code === "EACCES" || e.code === "EPERM" || e.code === "EROFS") && e.path)
      return new CliError(
        `cannot write ${e.path} (${e.code})`,
        `make TERN_DATA_DIR (${config.TERN_DATA_DIR}) writable by the user the server runs as`,
        1,
        { cause: err },
      );
  }
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes(`${SERVER_KEY_FILE}: expected`))
    return new CliError(
      `the server key file is damaged (${message})`,
      "put back secret.key from a backup (tern-server restore), or set TERN_SECRET_KEY; a new key cannot read the encrypted secrets",
      1,
      { cause: err },
    );
  return new CliError(`start-up failed: ${message.split("\n").join(" ")}`, "run with --debug for the details", 1, { cause: err });
}
