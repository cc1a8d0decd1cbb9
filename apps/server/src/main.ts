/** Entry point: the only place that reads process.env. Starts the server and stops it on SIGTERM/SIGINT. */
import path from "node:path";
import { pino } from "pino";
import { loadConfig, type ServerConfig } from "./config.ts";
import { DataDirPermissionsError } from "./data-dir/permissions.ts";
import { docsUrl, startServer } from "./server.ts";
import { announceInitialPassword } from "./services/accounts/initial-password.ts";

let config: ServerConfig;
try {
  config = loadConfig(process.env);
  // `npm start` at the repo root runs this in apps/server; a relative data dir means the directory npm was run from.
  config.TERN_DATA_DIR = path.resolve(process.env.INIT_CWD ?? process.cwd(), config.TERN_DATA_DIR);
} catch (err) {
  console.error(`tern-server: ${(err as Error).message}`);
  process.exit(1);
}

const logger = pino({ level: config.TERN_LOG_LEVEL, base: { service: "tern-server" } });

try {
  const server = await startServer(config, logger);
  const database = config.DATABASE_URL ? "PostgreSQL" : `embedded PGlite in ${config.TERN_DATA_DIR}`;
  logger.info({ url: server.url, docs: docsUrl(server), database }, `listening on ${server.url}, API docs at ${docsUrl(server)}`);
  if (server.bootstrap.created && server.bootstrap.generatedPassword) {
    // On a terminal only; otherwise into a 0600 file, never into a log (services/accounts/initial-password.ts).
    await announceInitialPassword(
      { email: server.bootstrap.email, password: server.bootstrap.generatedPassword, url: server.url, docsUrl: docsUrl(server) },
      {
        isTTY: process.stdout.isTTY === true,
        print: (text) => process.stdout.write(text),
        dataDir: config.TERN_DATA_DIR,
        logger,
      },
    );
  } else if (server.bootstrap.created) {
    logger.info({ email: server.bootstrap.email }, "created the administrator from TERN_ADMIN_EMAIL/TERN_ADMIN_PASSWORD");
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    server.close().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
} catch (err) {
  // An operator's mistake with one fix: one line saying it, like a configuration error, not a stack trace.
  if (err instanceof DataDirPermissionsError) console.error(`tern-server: ${err.message}`);
  else logger.fatal({ err }, "start-up failed");
  process.exit(1);
}
