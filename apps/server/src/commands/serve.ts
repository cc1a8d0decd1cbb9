/**
 * `tern-server serve` (and `npm start` through main.ts): starts the server,
 * hands the first administrator's generated password over once (a terminal or
 * a 0600 file, never a log), and stops
 * gracefully on SIGTERM/SIGINT. Start-up failures become one line (cli-error.ts).
 */
import { pino } from "pino";
import { docsUrl, startServer } from "../server.ts";
import { announceInitialPassword } from "../services/accounts/initial-password.ts";
import type { BootstrapResult } from "../services/bootstrap.ts";
import { tryListen } from "./doctor/port.ts";
import type { CliIo } from "./io.ts";
import { type GlobalOptions, loadSettings } from "./settings.ts";
import { startupError } from "./startup-errors.ts";

export interface ServeOptions {
  port?: string;
  host?: string;
}

/** Resolves with the exit code once the server has stopped (or failed to start). */
export async function serve(io: CliIo, globals: GlobalOptions, options: ServeOptions = {}): Promise<number> {
  const config = await loadSettings(io, globals, {
    ...(options.port !== undefined ? { PORT: options.port } : {}),
    ...(options.host !== undefined ? { HOST: options.host } : {}),
  });
  const logger = pino({ level: config.TERN_LOG_LEVEL, base: { service: "tern-server" } });

  // A busy port fails now, not after the database is opened and migrated (startServer still reports a race).
  const portError = config.PORT === 0 ? null : await tryListen(config.PORT, config.HOST);
  if (portError) throw startupError(Object.assign(portError, { syscall: "listen" }), config);

  // Before the server listens: a script that waits for /api/health finds the password's file there.
  const announce = async (bootstrap: BootstrapResult, url: string) => {
    if (bootstrap.created && bootstrap.generatedPassword) {
      // On a terminal only; otherwise into a 0600 file, never into a log (services/accounts/initial-password.ts).
      await announceInitialPassword(
        { email: bootstrap.email, password: bootstrap.generatedPassword, url, docsUrl: docsUrl({ url }) },
        { isTTY: io.stdoutIsTTY === true, print: io.out, dataDir: config.TERN_DATA_DIR, logger },
      );
    } else if (bootstrap.created) {
      logger.info({ email: bootstrap.email }, "created the administrator from TERN_ADMIN_EMAIL/TERN_ADMIN_PASSWORD");
    }
  };
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, logger, { beforeListen: announce });
  } catch (err) {
    throw startupError(err, config);
  }
  const database = config.DATABASE_URL ? "PostgreSQL" : `embedded PGlite in ${config.TERN_DATA_DIR}`;
  logger.info({ url: server.url, docs: docsUrl(server), database }, `listening on ${server.url}, API docs at ${docsUrl(server)}`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "shutting down: finishing in-flight requests");
      // A stop that hangs (a database that does not answer) must still end: the service manager waits 10 s at most.
      setTimeout(() => {
        logger.error("shutdown did not finish in time: exiting");
        process.exit(1);
      }, 9_500).unref();
      server.close().then(
        () => {
          logger.info("stopped");
          resolve(0);
        },
        (err) => {
          logger.error({ err }, "shutdown failed");
          resolve(1);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
}
