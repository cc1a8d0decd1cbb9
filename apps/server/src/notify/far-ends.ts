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
 * Look-ups that come due together go to the database as one statement. (At
 * 10,000 devices on one instance, every far end looked up every 2 s was
 * 250 statements a second at steady state, half of all the server ran.)
 */
import { batchLookup } from "../db/batch-lookup.ts";
import type { Db } from "../db/schema.ts";
import { anyUuid } from "../services/desired-config.ts";

const REFRESH_MS = 2000;

interface Entry {
  live: boolean;
  checkedAt: number;
  loading: boolean;
}

export class FarEnds {
  private readonly entries = new Map<string, Entry>();
  private readonly connections = batchLookup(
    (ids) => this.db.selectFrom("devices").select(["id", "connection"]).where("id", "=", anyUuid(ids)).execute(),
    (r) => r.id,
  );

  constructor(
    private readonly db: Db,
    private readonly queue: (key: string, work: () => Promise<void>) => void,
    /** True when this instance holds a welcomed link to the device. */
    private readonly connectedHere: (deviceId: string) => boolean,
  ) {}

  /** True when `deviceId` is known connected; false when known not, or not looked up yet. Queues a refresh when stale. */
  live(deviceId: string, now = Date.now()): boolean {
    if (this.connectedHere(deviceId)) return true;
    let e = this.entries.get(deviceId);
    if (!e) {
      e = { live: false, checkedAt: 0, loading: false };
      this.entries.set(deviceId, e);
    }
    if (!e.loading && now - e.checkedAt >= REFRESH_MS) this.refresh(deviceId, e);
    return e.live;
  }

  private refresh(deviceId: string, e: Entry): void {
    e.loading = true;
    this.queue(`far:${deviceId}`, async () => {
      try {
        const [row] = await this.connections.submit(deviceId);
        e.live = row?.connection === "connected";
        e.checkedAt = Date.now();
      } finally {
        e.loading = false;
      }
    });
  }

  /** Forgets a device (it disconnected or connected: look again at once). */
  forget(deviceId: string): void {
    this.entries.delete(deviceId);
  }
}
