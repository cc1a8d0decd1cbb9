/**
 * Starts the whole server from a parsed config: server key, database,
 * migrations, first admin, HTTP listener. Returns a handle whose close() is the
 * graceful shutdown (stop accepting, let in-flight requests finish, close the
 * database). main.ts calls it; tests can too.
 */
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createAdaptorServer, type ServerType } from "@hono/node-server";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { AuthCache } from "./auth/auth-cache.ts";
import { createRateLimiter } from "./auth/rate-limiter.ts";
import type { ServerConfig } from "./config.ts";
import { assertPrivateDataDir, restrictUmask } from "./data-dir/permissions.ts";
import { type DataDirLock, lockDataDir } from "./db/data-dir-lock.ts";
import { type DatabaseHandle, openDatabase } from "./db/database.ts";
import { EmbeddedVacuum } from "./db/embedded-vacuum.ts";
import { migrateToLatest } from "./db/migrate.ts";
import type { AppDeps } from "./deps.ts";
import { offlineDeviceLink } from "./gateway/device-link.ts";
import { GatewayEvents } from "./gateway/events.ts";
import { createGateway, type Gateway } from "./gateway/gateway.ts";
import { liveStatusReader } from "./gateway/live-state/status-reader.ts";
import type { AppEnv } from "./http/env.ts";
import { API_BASE } from "./http/openapi.ts";
import { createServerMetrics } from "./metrics/server-metrics.ts";
import { NotificationEngine } from "./notify/engine.ts";
import { createKeyring } from "./secrets/keyring.ts";
import { reencryptSecrets } from "./secrets/reencrypt.ts";
import { loadServerKey } from "./secrets/server-key.ts";
import { createLoginLimits } from "./services/accounts/login-limits.ts";
import { recordUpgradeReports } from "./services/agent-upgrades/reports.ts";
import { rolloutDuty } from "./services/agent-upgrades/rollout-duty.ts";
import { type BootstrapResult, bootstrapFirstAdmin } from "./services/bootstrap.ts";
import { sealLegacyDesiredConfigs } from "./services/desired-config-seal.ts";
import { Recompiler } from "./services/fanout/recompile.ts";
import { LiveEventHub } from "./services/live-events/hub.ts";
import { publishTunnelStatusEvents } from "./services/live-events/tunnel-status-events.ts";

export interface RunningServer {
  url: string;
  port: number;
  deps: AppDeps;
  app: OpenAPIHono<AppEnv>;
  /** The Node HTTP server (the device gateway attaches its websocket upgrade here). */
  http: ServerType;
  /** The device gateway: websocket links, job engine, live state (also deps.deviceLink). */
  gateway: Gateway;
  /** The notification rule engine and its deliveries. */
  notifications: NotificationEngine;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

/** Opens and migrates the database the config names (PGlite in <data dir>/pgdata by default). */
export async function openConfiguredDatabase(config: ServerConfig): Promise<DatabaseHandle> {
  return config.DATABASE_URL
    ? openDatabase({
        kind: "postgres",
        url: config.DATABASE_URL,
        poolSize: config.TERN_DB_POOL_SIZE,
        preparedStatements: config.TERN_DB_PREPARED_STATEMENTS,
      })
    : openDatabase({
        kind: "pglite",
        dataDir: path.resolve(config.TERN_DATA_DIR, "pgdata"),
        preparedStatements: config.TERN_DB_PREPARED_STATEMENTS,
      });
}

/**
 * Connections the kernel holds for the server before it accepts them: as many as the host allows (the kernel
 * caps it at net.core.somaxconn: 4,096 by default on current Linux, 16,384 as the package sets it,
 * packaging/tern-server/sysctl.conf). Node's default, 511, overflows when a fleet reconnects at once: a device
 * whose connection is dropped from a full queue waits for TCP's retransmission (1, 3, 7, 15 s…) or its own
 * back-off, while the server sits idle.
 */
export const LISTEN_BACKLOG = 65535;

function listen(fetch: (req: Request) => Response | Promise<Response>, config: ServerConfig): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({ fetch, hostname: config.HOST });
    server.once("error", reject);
    server.once("listening", () => resolve(server));
    server.listen({ port: config.PORT, host: config.HOST, backlog: LISTEN_BACKLOG });
  });
}

function closeHttp(server: ServerType, graceSeconds: number): Promise<void> {
  return new Promise((resolve) => {
    const canClose = "closeIdleConnections" in server;
    // A keep-alive socket turns idle when its in-flight request is answered: close those as they appear.
    const sweep = canClose ? setInterval(() => server.closeIdleConnections(), 50) : undefined;
    const force = setTimeout(() => {
      if ("closeAllConnections" in server) server.closeAllConnections();
    }, graceSeconds * 1000);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    if (canClose) server.closeIdleConnections();
  });
}

export interface StartOptions {
  /**
   * An open, migrated-or-not database to use instead of the one the config
   * names; it stays open after close() (tests restart servers on one database).
   */
  database?: DatabaseHandle;
  /**
   * Runs once the first administrator exists and before the server listens (when PORT is 0, right after,
   * with the port it got): what it writes (the generated password's file) is there before any request is
   * answered, so a script that waits for /api/health can read it.
   */
  beforeListen?: (bootstrap: BootstrapResult, url: string) => Promise<void>;
}

export async function startServer(config: ServerConfig, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  // The data directory holds the embedded database and/or the generated key: owner only (data-dir/permissions.ts).
  const dataDir = path.resolve(config.TERN_DATA_DIR);
  const embedded = !config.DATABASE_URL && !options.database;
  const usesDataDir = embedded || !config.TERN_SECRET_KEY;
  if (usesDataDir) {
    restrictUmask();
    await assertPrivateDataDir(dataDir);
  }
  const serverKey = await loadServerKey({ secretKey: config.TERN_SECRET_KEY, dataDir: config.TERN_DATA_DIR });
  if (serverKey.source === "generated") logger.info({ file: serverKey.file }, "generated a new server key");
  if (config.DATABASE_URL && serverKey.source !== "environment") {
    logger.warn(
      { file: serverKey.file },
      "server key read from a local file: every instance on this PostgreSQL needs the same key, set TERN_SECRET_KEY on all of them",
    );
  }

  const ownsDatabase = !options.database;
  let lock: DataDirLock | null = null;
  if (!config.DATABASE_URL && ownsDatabase) lock = await lockDataDir(path.resolve(config.TERN_DATA_DIR));
  let database: DatabaseHandle | null = null;
  let gateway: Gateway | null = null;
  let notifications: NotificationEngine | null = null;
  let authCacheRef: AuthCache | null = null;
  let vacuum: EmbeddedVacuum | null = null;
  try {
    // The check above saw nothing loose; openDatabase tightens what PGlite unpacks into a new database.
    database = options.database ?? (await openConfiguredDatabase(config));
    const applied = await migrateToLatest(database.db as never);
    for (const m of applied) logger.info({ migration: m.migrationName, status: m.status }, "migration");
    // PGlite has no autovacuum of its own (db/embedded-vacuum.ts); PostgreSQL's runs in the database server.
    if (database.kind === "pglite") {
      vacuum = new EmbeddedVacuum(database.db, logger);
      vacuum.start();
    }
    const bootstrap = await bootstrapFirstAdmin(database.db, {
      email: config.TERN_ADMIN_EMAIL,
      password: config.TERN_ADMIN_PASSWORD,
      passwordHashCost: config.TERN_PASSWORD_HASH_COST,
    });

    const previousKeys = (config.TERN_SECRET_KEY_PREVIOUS ?? []).map((k) => Buffer.from(k, "base64"));
    const keyring = createKeyring(serverKey.key, previousKeys);
    const sealed = await sealLegacyDesiredConfigs(database.db, keyring);
    if (sealed) logger.info({ devices: sealed }, "desired configs stored in clear by an older server sealed");
    if (keyring.hasPreviousKeys) await rotateStoredSecrets(database.db, keyring, config, logger);

    const events = new GatewayEvents(logger);
    const deps: AppDeps = {
      db: database.db,
      dbKind: database.kind,
      config,
      logger,
      keyring,
      loginLimits: createLoginLimits(config),
      registerLimit: createRateLimiter(config.TERN_REGISTER_RATE_IP, config.TERN_REGISTER_RATE_WINDOW),
      metrics: createServerMetrics(),
      deviceLink: offlineDeviceLink(events),
    };
    const authCache = new AuthCache();
    await authCache.start(database, logger);
    authCacheRef = authCache;
    deps.authCache = authCache;
    const notify = new NotificationEngine(deps);
    notifications = notify;
    const gw = createGateway(deps, database, events, { duties: [...notify.duties(), rolloutDuty(deps)] });
    gateway = gw;
    deps.deviceLink = gw;
    deps.deviceStatus = liveStatusReader(deps);
    const live = new LiveEventHub(deps.db, gw.bus, logger);
    deps.liveEvents = live;
    const stopTunnelEvents = publishTunnelStatusEvents(deps.db, events, logger);
    const stopUpgradeReports = recordUpgradeReports(deps, events);
    notify.start(events, gw.bus);
    await gw.start();
    // Fan-outs answer before compiling (services/fanout): this instance compiles what they marked, and what a
    // stopped instance left marked.
    const recompiler = new Recompiler(deps);
    deps.recompiler = recompiler;
    recompiler.start();
    live.start();
    const app = createApp(deps);
    const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
    if (config.PORT !== 0) await options.beforeListen?.(bootstrap, `http://${host}:${config.PORT}`);
    const http = await listen(app.fetch, config);
    gw.attach(http);
    const port = (http.address() as AddressInfo).port;
    const url = `http://${host}:${port}`;
    if (config.PORT === 0) await options.beforeListen?.(bootstrap, url);
    const db = database;
    let closing: Promise<void> | null = null;
    return {
      url,
      port,
      deps,
      app,
      http,
      gateway: gw,
      notifications: notify,
      bootstrap,
      close() {
        closing ??= (async () => {
          // Event streams never finish by themselves: end them, so their responses do not hold the listener open.
          stopTunnelEvents();
          stopUpgradeReports();
          live.close();
          // Devices' links (close code 1012, their jobs requeued) and in-flight HTTP requests wind down together, both
          // before the database closes: one after the other they could add up past the 10 s a service manager gives.
          await Promise.all([
            gw.close().then(() => notify.close()),
            closeHttp(http, config.TERN_SHUTDOWN_GRACE),
            recompiler.close(),
          ]);
          await authCache.close();
          await vacuum?.close();
          if (ownsDatabase) await db.close();
          await lock?.release();
        })();
        return closing;
      },
    };
  } catch (err) {
    await gateway?.close().catch(() => {});
    await notifications?.close(0).catch(() => {});
    await authCacheRef?.close().catch(() => {});
    await vacuum?.close();
    if (ownsDatabase) await database?.close().catch(() => {});
    await lock?.release();
    throw err;
  }
}

/** Key rotation at start: every secret re-encrypted with the current key, and what is left to do logged. */
async function rotateStoredSecrets(
  db: DatabaseHandle["db"],
  keyring: ReturnType<typeof createKeyring>,
  config: ServerConfig,
  logger: Logger,
) {
  const result = await reencryptSecrets(db, keyring);
  logger.info(
    { reencrypted: result.reencrypted, alreadyCurrent: result.current, unreadable: result.unreadable.length },
    `server key rotation: ${result.reencrypted} stored secrets re-encrypted with the current key; remove TERN_SECRET_KEY_PREVIOUS ` +
      `once every instance runs with the new key and ${config.TERN_ACCESS_TOKEN_TTL} s have passed (access tokens the old key signed)`,
  );
  if (result.unreadable.length) {
    logger.error(
      { unreadable: result.unreadable.slice(0, 20) },
      `${result.unreadable.length} stored secrets open with neither TERN_SECRET_KEY nor TERN_SECRET_KEY_PREVIOUS: add the key they were written with to TERN_SECRET_KEY_PREVIOUS`,
    );
  }
}

export function docsUrl(server: { url: string }): string {
  return `${server.url}${API_BASE}/docs`;
}
