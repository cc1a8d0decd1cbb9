/**
 * Tunnel status is not a column (it is derived from the ends' reports), so no
 * trigger sees it change: the instance that takes in a device's status
 * journals a tunnel event when an end's reported up/down flips. `data.status`
 * is the reporting end's view, a hint: the console refetches the tunnel.
 *
 * The flips are taken from what the batched writer has committed
 * ("live-state-written"), not from the status as it arrives: a console that
 * refetches on the event must read the new figures, and the writer stores
 * them up to a flush interval later. One statement per flush that flipped
 * anything, off the ingest path, in flush order; one event per organization
 * and flush: the tunnel's own when one flipped, `*` with a `count` when
 * several did.
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { GatewayEvents } from "../../gateway/events.ts";

const KNOWN = { a: 1, b: 4 } as const;
const UP = { a: 2, b: 8 } as const;

export function publishTunnelStatusEvents(db: Db, events: GatewayEvents, logger: Logger): () => void {
  /**
   * Tunnel id → its ends' last written up, as bits (one entry per tunnel, not per end: at 10,000 devices
   * the keys were most of what this map held): KNOWN[side] once the end reported, UP[side] when up.
   */
  const lastUp = new Map<string, number>();
  /** Journals one flush's events after the previous flush's: a later event never overtakes an earlier one. */
  let chain: Promise<void> = Promise.resolve();
  const offWritten = events.on("live-state-written", (e) => {
    const flips: { id: string; up: boolean }[] = [];
    for (const t of e.tunnelEnds) {
      const bits = lastUp.get(t.tunnelId) ?? 0;
      const known = KNOWN[t.side];
      const up = UP[t.side];
      lastUp.set(t.tunnelId, (bits & ~up) | known | (t.up ? up : 0));
      // The first report of an end counts: a new tunnel's first "up" is the change the console waits for.
      if ((bits & known) === 0 || ((bits & up) !== 0) !== t.up) flips.push({ id: t.tunnelId, up: t.up });
    }
    if (flips.length === 0) return;
    // The tunnel's organization from the tunnel itself (a tunnel deleted meanwhile announces nothing). One event
    // per organization, in the order of its first flip: the tunnel's own with its status when it is the only one,
    // `*` with their count when several flipped (a fleet coming online flips thousands in one flush).
    const publish = sql`with f as (select t.organization_id as org, t.id, f.up, f.n,
          count(*) over (partition by t.organization_id) as c,
          row_number() over (partition by t.organization_id order by f.n) as rn
        from unnest(${flips.map((f) => f.id)}::uuid[], ${flips.map((f) => f.up)}::boolean[]) with ordinality as f(id, up, n)
        join tunnels t on t.id = f.id)
      select case when c = 1
          then tern_live_event(org, 'tunnel', 'updated', id::text,
            jsonb_build_object('status', case when up then 'Connected' else 'Not Connected' end))
          else tern_live_event(org, 'tunnel', 'updated', '*', jsonb_build_object('count', c)) end
      from f where rn = 1
      order by n`;
    chain = chain
      .then(() => publish.execute(db))
      .then(
        () => undefined,
        (err) => logger.warn({ err }, "could not publish tunnel status events"),
      );
  });
  return offWritten;
}
