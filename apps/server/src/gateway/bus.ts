/**
 * PostgreSQL LISTEN/NOTIFY between server instances. On a PostgreSQL server a
 * dedicated pg client (not from the pool: a pooled connection would drop its
 * LISTENs when returned) listens and reconnects with back-off; after a
 * reconnect the `onReconnect` handlers run, since notifications sent while it
 * was away are lost. On embedded PGlite (one process) the database delivers
 * notifications to the process itself. NOTIFY is sent through the normal
 * pool, so a notification sent in a transaction goes out at commit.
 */
import { sql } from "kysely";
import pg from "pg";
import type { Logger } from "pino";
import type { EmbeddedDatabase } from "../db/pglite-thread/client.ts";
import type { Db } from "../db/schema.ts";

/**
 * jobs queued (payload: device id; from a trigger), device deleted/unapproved (trigger), gateway messages (JSON),
 * live events for the console (JSON from the live-event triggers: services/live-events), rule-engine contexts
 * changed (device ids or `*`; triggers of migration 20261202-301-notify-context).
 */
export const CHANNELS = ["tern_jobs", "tern_device", "tern_gateway", "tern_live", "tern_context"] as const;
/** Channels of a bus of their own: access changed (trigger; auth/auth-cache.ts). */
export type BusChannel = (typeof CHANNELS)[number] | "tern_auth";

/** PostgreSQL's limit on a NOTIFY payload is 8000 bytes; keep a margin. */
export const MAX_NOTIFY_BYTES = 7900;

export interface Bus {
  start(): Promise<void>;
  on(channel: BusChannel, handler: (payload: string) => void): void;
  onReconnect(handler: () => void): void;
  publish(channel: BusChannel, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface BusTarget {
  db: Db;
  url?: string | undefined;
  pglite?: EmbeddedDatabase | undefined;
}

/** `channels`: what this bus listens to (default: the gateway's CHANNELS). */
export function createBus(target: BusTarget, logger: Logger, channels: readonly BusChannel[] = CHANNELS): Bus {
  const handlers = new Map<BusChannel, ((payload: string) => void)[]>();
  const reconnectHandlers: (() => void)[] = [];
  const deliver = (channel: string, payload: string) => {
    for (const h of handlers.get(channel as BusChannel) ?? []) {
      try {
        h(payload);
      } catch (err) {
        logger.error({ err, channel }, "notification handler failed");
      }
    }
  };
  const listener = target.pglite
    ? pgliteListener(target.pglite, channels, deliver)
    : target.url
      ? pgListener(target.url, channels, deliver, logger, () => {
          for (const h of reconnectHandlers) h();
        })
      : null;
  if (!listener) throw new Error("the bus needs a PostgreSQL URL or the PGlite instance");

  return {
    start: () => listener.start(),
    on(channel, handler) {
      handlers.set(channel, [...(handlers.get(channel) ?? []), handler]);
    },
    onReconnect(handler) {
      reconnectHandlers.push(handler);
    },
    async publish(channel, payload) {
      if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES) throw new Error(`notification payload over ${MAX_NOTIFY_BYTES} bytes`);
      await sql`select pg_notify(${channel}, ${payload})`.execute(target.db);
    },
    close: () => listener.close(),
  };
}

interface Listener {
  start(): Promise<void>;
  close(): Promise<void>;
}

function pgliteListener(
  pglite: EmbeddedDatabase,
  channels: readonly BusChannel[],
  deliver: (channel: string, payload: string) => void,
): Listener {
  const unsubscribe: (() => Promise<void>)[] = [];
  return {
    async start() {
      for (const channel of channels) unsubscribe.push(await pglite.listen(channel, (payload) => deliver(channel, payload)));
    },
    async close() {
      if (pglite.closed) return;
      for (const u of unsubscribe.splice(0)) await u().catch(() => {});
    },
  };
}

function pgListener(
  url: string,
  channels: readonly BusChannel[],
  deliver: (channel: string, payload: string) => void,
  logger: Logger,
  reconnected: () => void,
): Listener {
  let client: pg.Client | null = null;
  let closed = false;
  let delay = 500;
  let timer: NodeJS.Timeout | null = null;

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: url, keepAlive: true, application_name: "tern-gateway-listen" });
    c.on("notification", (n) => deliver(n.channel, n.payload ?? ""));
    c.on("error", (err) => {
      logger.warn({ err }, "LISTEN connection failed; reconnecting");
      lost(c);
    });
    c.on("end", () => lost(c));
    await c.connect();
    for (const channel of channels) await c.query(`LISTEN ${channel}`);
    client = c;
  }

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = null;
    c.end().catch(() => {});
    schedule();
  }

  function schedule(): void {
    if (closed || timer) return;
    timer = setTimeout(async () => {
      timer = null;
      try {
        await connect();
        delay = 500;
        logger.info("LISTEN connection restored");
        reconnected();
      } catch (err) {
        logger.warn({ err, retryMs: delay }, "LISTEN reconnect failed");
        delay = Math.min(delay * 2, 10_000);
        schedule();
      }
    }, delay);
  }

  return {
    start: connect,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
