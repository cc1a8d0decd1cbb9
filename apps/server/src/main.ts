/** Entry point: the only place that reads process.env. Starts the server and stops it on SIGTERM/SIGINT. */
import path from "node:path";
import { pino } from "pino";
import { loadConfig, type ServerConfig } from "./config.ts";
import { docsUrl, startServer } from "./server.ts";

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
    // Printed once, to the console and not to the structured log.
    process.stderr.write(
      [
        "",
        "  First start: created the administrator account.",
        `    username: ${server.bootstrap.email}`,
        `    password: ${server.bootstrap.generatedPassword}`,
        "  It is shown only now. Log in:",
        `    curl -s -X POST ${server.url}/api/users/login -H 'content-type: application/json' \\`,
        `      -d '{"username":"${server.bootstrap.email}","password":"<password>"}'`,
        `  API docs: ${docsUrl(server)}`,
        "",
        "",
      ].join("\n"),
    );
  } else if (server.bootstrap.created) {
    logger.info({ email: server.bootstrap.email }, "created the administrator from TERN_ADMIN_EMAIL/TERN_ADMIN_PASSWORD");
  }

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
  logger.fatal({ err }, "start-up failed");
  process.exit(1);
}
