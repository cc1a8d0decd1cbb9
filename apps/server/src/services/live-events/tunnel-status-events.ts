/**
 * Tunnel status is not a column (it is derived from the ends' reports), so no
 * trigger sees it change: the instance that takes in a device's status
 * journals a tunnel event when an end's reported up/down flips. `data.status`
 * is the reporting end's view, a hint: the console refetches the tunnel.
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { GatewayEvents } from "../../gateway/events.ts";

export function publishTunnelStatusEvents(db: Db, events: GatewayEvents, logger: Logger): () => void {
  /** `<tunnel id>:<side>` → the end's last reported up. */
  const lastUp = new Map<string, boolean>();
  const offStatus = events.on("status", (e) => {
    for (const t of e.tunnels) {
      const key = `${t.id}:${t.side}`;
      const before = lastUp.get(key);
      lastUp.set(key, t.up);
      // The first report of an end counts: a new tunnel's first "up" is the change the console waits for.
      if (before === t.up) continue;
      sql`select tern_live_event(${e.orgId}::uuid, 'tunnel', 'updated', ${t.id}, ${JSON.stringify({
        status: t.up ? "Connected" : "Not Connected",
      })}::jsonb)`
        .execute(db)
        .catch((err) => logger.warn({ err }, "could not publish a tunnel status event"));
    }
  });
  return offStatus;
}
