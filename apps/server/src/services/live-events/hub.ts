/**
 * The live-event hub of one server instance. Database triggers journal every
 * change of a device, tunnel, job or notification in `live_events` and NOTIFY
 * `tern_live` (migration 20261125-701-console), so a change made through any
 * instance reaches the event streams of all of them; the hub fans each event
 * out to this instance's subscribers of that organization, replays the
 * journal after a Last-Event-ID, prunes it, and ends every stream on shutdown.
 */
import type { LiveEvent } from "@tern/protocol";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { Bus } from "../../gateway/bus.ts";

export interface LiveEventHubOptions {
  /** How long the journal keeps events for replay (default 5 minutes). */
  retentionMs?: number;
  /** At most this many events are replayed per organization; beyond, the client resyncs (default 10,000). */
  replayLimit?: number;
  /** A `: keep-alive` comment this often on every stream (default 15 s). */
  keepAliveMs?: number;
}

export interface LiveSubscriber {
  orgId: string;
  /** Delivers one event (already filtered by organization). */
  send(id: string, event: LiveEvent): void;
  /** The hub is shutting down: end the stream. */
  close(): void;
}

export type Replay = { kind: "events"; events: { id: string; event: LiveEvent }[] } | { kind: "resync"; latestId: string };

interface Notified {
  id: number | string;
  org: string;
  event: LiveEvent;
}

export class LiveEventHub {
  readonly keepAliveMs: number;
  private readonly retentionMs: number;
  private readonly replayLimit: number;
  private readonly subscribers = new Map<string, Set<LiveSubscriber>>();
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    bus: Pick<Bus, "on">,
    private readonly logger: Logger,
    options: LiveEventHubOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? 5 * 60_000;
    this.replayLimit = options.replayLimit ?? 10_000;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
    bus.on("tern_live", (payload) => this.deliver(JSON.parse(payload) as Notified));
  }

  /** Starts pruning the journal (every instance prunes; deleting twice is harmless). */
  start(): void {
    const every = Math.max(1_000, Math.min(60_000, this.retentionMs / 5));
    this.pruneTimer = setInterval(() => void this.prune(), every);
    this.pruneTimer.unref();
  }

  get subscriberCount(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  subscribe(sub: LiveSubscriber): () => void {
    if (this.closed) {
      sub.close();
      return () => {};
    }
    let set = this.subscribers.get(sub.orgId);
    if (!set) {
      set = new Set();
      this.subscribers.set(sub.orgId, set);
    }
    set.add(sub);
    return () => {
      set.delete(sub);
      if (set.size === 0 && this.subscribers.get(sub.orgId) === set) this.subscribers.delete(sub.orgId);
    };
  }

  /** The organization's events after `afterId` still in the journal, or "resync" when some are gone or too many. */
  async replay(orgId: string, afterId: string): Promise<Replay> {
    const after = /^\d{1,18}$/.test(afterId) ? afterId : null;
    const bounds = await sql<{ min_id: string | null; last_id: string }>`
      select (select min(id) from live_events)::text as min_id,
             (select case when is_called then last_value else 0 end from live_events_id_seq)::text as last_id`.execute(this.db);
    const { min_id: minId, last_id: lastId } = bounds.rows[0]!;
    // Not an id we gave, or from before the oldest kept event (pruned events may lie between): start over.
    if (after === null || BigInt(after) > BigInt(lastId)) return { kind: "resync", latestId: lastId };
    const oldestKept = minId === null ? BigInt(lastId) + 1n : BigInt(minId);
    if (BigInt(after) + 1n < oldestKept) return { kind: "resync", latestId: lastId };
    const rows = await this.db
      .selectFrom("live_events")
      .select([sql<string>`id::text`.as("id"), "event"])
      .where("organization_id", "=", orgId)
      .where(sql<boolean>`id > ${after}::bigint`)
      .orderBy("id")
      .limit(this.replayLimit + 1)
      .execute();
    if (rows.length > this.replayLimit) return { kind: "resync", latestId: lastId };
    return { kind: "events", events: rows.map((r) => ({ id: r.id, event: r.event })) };
  }

  /** Ends every stream (shutdown): their HTTP responses finish so the listener can close. */
  close(): void {
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    for (const set of this.subscribers.values()) for (const sub of set) sub.close();
    this.subscribers.clear();
  }

  private deliver(n: Notified): void {
    const set = this.subscribers.get(n.org);
    if (!set) return;
    const id = String(n.id);
    for (const sub of set) {
      try {
        sub.send(id, n.event);
      } catch (err) {
        this.logger.warn({ err }, "live event delivery failed");
      }
    }
  }

  private async prune(): Promise<void> {
    try {
      await this.db
        .deleteFrom("live_events")
        .where("created_at", "<", new Date(Date.now() - this.retentionMs))
        .execute();
    } catch (err) {
      if (!this.closed) this.logger.warn({ err }, "pruning live events failed");
    }
  }
}
