/**
 * Whether the device at the far end of a tunnel is connected to the server.
 * While it is not, what the near end says about the tunnel (down, lossy,
 * slow) is held: the far device's own trouble is one "device connection"
 * notification, not a tunnel-down storm from every device it has tunnels with
 * (the spec shows such tunnels N/A). A far host that dies without closing its
 * link counts as connected until the link's pings time out
 * (TERN_WS_PING_INTERVAL_MS × TERN_WS_PING_MISSES, 80 s by default): a near
 * end that confirms the tunnel down before that still raises it.
 *
 * A far device linked to this instance is live without a look-up (the
 * gateway's links are what the database's `connection` is written from).
 * Others, on another instance or disconnected, come from a small cache
 * refreshed through the engine's work queue (at most every REFRESH_MS per
 * device), so evaluating a status needs no query; a device not looked up yet
 * is not known live (its tunnels hold until the next status, a few seconds).
 * Look-ups that come due within LOOKUP_WINDOW_MS go to the database as one
 * statement. (At 10,000 devices on one instance, every far end looked up
 * every 2 s was 250 statements a second at steady state, half of all the
 * server ran. Batched only by what arrived during the previous look-up, four
 * instances, whose far ends are three quarters on the others, still sent
 * about 210 statements a second at 4,000 devices, six ids each.)
 */
import type { Db } from "../db/schema.ts";
import { anyUuid } from "../services/desired-config.ts";

const REFRESH_MS = 2000;
/** How long a due look-up waits for others to join it. */
export const LOOKUP_WINDOW_MS = 500;
/** Ids per statement (an array parameter; a larger batch is several statements of one task). */
const MAX_IDS = 5000;

interface Entry {
  live: boolean;
  checkedAt: number;
  loading: boolean;
}

export class FarEnds {
  private readonly entries = new Map<string, Entry>();
  /** Entries whose look-up is due, for the next batch. */
  private due = new Map<string, Entry>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly queue: (key: string, work: () => Promise<void>) => void,
    /** True when this instance holds a welcomed link to the device. */
    private readonly connectedHere: (deviceId: string) => boolean,
    private readonly windowMs = LOOKUP_WINDOW_MS,
  ) {}

  /** True when `deviceId` is known connected; false when known not, or not looked up yet. Queues a refresh when stale. */
  live(deviceId: string, now = Date.now()): boolean {
    if (this.connectedHere(deviceId)) return true;
    let e = this.entries.get(deviceId);
    if (!e) {
      e = { live: false, checkedAt: 0, loading: false };
      this.entries.set(deviceId, e);
    }
    if (!e.loading && now - e.checkedAt >= REFRESH_MS) {
      e.loading = true;
      this.due.set(deviceId, e);
      if (!this.timer) {
        this.timer = setTimeout(() => this.lookUpDue(), this.windowMs);
        this.timer.unref();
      }
    }
    return e.live;
  }

  /** Queues the look-up of every far end due now, as one task (the window's timer calls it; `close` drops it). */
  lookUpDue(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const due = this.due;
    this.due = new Map();
    if (due.size === 0) return;
    this.queue("far-ends", async () => {
      try {
        const ids = [...due.keys()];
        for (let i = 0; i < ids.length; i += MAX_IDS) {
          const batch = ids.slice(i, i + MAX_IDS);
          const rows = await this.db
            .selectFrom("devices")
            .select(["id", "connection"])
            .where("id", "=", anyUuid(batch))
            .execute();
          const connected = new Set(rows.filter((r) => r.connection === "connected").map((r) => r.id));
          const at = Date.now();
          for (const id of batch) {
            const e = due.get(id)!;
            // A device gone from the table is not live.
            e.live = connected.has(id);
            e.checkedAt = at;
          }
        }
      } finally {
        // A failed look-up is tried again at the next status that asks.
        for (const e of due.values()) e.loading = false;
      }
    });
  }

  /** Forgets a device (it disconnected or connected: look again at once). */
  forget(deviceId: string): void {
    this.entries.delete(deviceId);
  }

  /** Drops the look-ups not queued yet (the engine is closing). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const e of this.due.values()) e.loading = false;
    this.due.clear();
  }
}
