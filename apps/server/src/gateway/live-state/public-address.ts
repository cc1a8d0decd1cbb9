/**
 * Public IP/port of each configured interface as the device reports it. A
 * change is written to the device's interfaces (PublicIP/PublicPort, read by
 * the config compiler: NAT traversal of tunnels) and re-configures the device
 * and the far ends of its tunnels. An interface whose address changed more
 * than `maxChanges` times within `windowMs` is rate-limited: its
 * `isPublicAddressRateLimited` is set and further changes are not applied
 * (no re-config) until the changes in the window fall back to the limit; then
 * the address it has at that moment is applied and the flag cleared.
 *
 * Decisions are made in memory as reports arrive (cheap); only a change, or
 * the limit switching on or off, costs database work.
 */
import type { DeviceInterface, InterfaceState } from "@tern/protocol";
import { toJson } from "../../db/json.ts";
import type { Db, PublicAddressHistory } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { sharedString } from "../../memory/shared-string.ts";
import { systemCtx } from "../../services/context.ts";
import { queueConfigJobs } from "../../services/desired-config.ts";
import type { DeviceConnection } from "../connection.ts";
import type { GatewayEvents } from "../events.ts";
import { lockWithNeighbours } from "./tunnel-neighbours.ts";

export interface PublicAddressLimits {
  maxChanges: number;
  windowMs: number;
}

/**
 * The change times of an interface whose address has not changed lately, shared by every such history (almost all
 * of them): a history's times are replaced, never changed in place.
 */
const NO_CHANGES: number[] = Object.freeze([]) as unknown as number[];

/** The starting history of each configured interface: what was stored, else the interface's PublicIP/PublicPort. */
export function initialHistory(
  interfaces: DeviceInterface[],
  stored: Record<string, PublicAddressHistory> | undefined,
): Record<string, PublicAddressHistory> {
  const result: Record<string, PublicAddressHistory> = {};
  for (const itf of interfaces) {
    const port = Number.parseInt(itf.PublicPort, 10);
    result[sharedString(itf.devId)] = stored?.[itf.devId] ?? {
      publicIp: itf.PublicIP,
      publicPort: Number.isFinite(port) ? port : null,
      changes: NO_CHANGES,
      limited: itf.isPublicAddressRateLimited,
    };
  }
  return result;
}

export class PublicAddressTracker {
  constructor(
    private readonly deps: AppDeps,
    private readonly events: GatewayEvents,
    private readonly limits: PublicAddressLimits,
  ) {}

  /** Compares a status' interfaces with the link's history; schedules database work only when something changed. */
  observe(conn: DeviceConnection, interfaces: InterfaceState[], now = Date.now()): void {
    for (const itf of interfaces) {
      // An empty public IP means "not known" (e.g. no STUN answer): it never erases a known one.
      if (!itf.publicIp) continue;
      const h = conn.publicAddresses[itf.devId];
      if (!h) continue;
      const changed = h.publicIp !== itf.publicIp || h.publicPort !== itf.publicPort;
      // Only a history with a change gone out of the window is filtered: most statuses make no array.
      const since = now - this.limits.windowMs;
      if (h.changes.some((t) => t <= since)) {
        const kept = h.changes.filter((t) => t > since);
        h.changes = kept.length > 0 ? kept : NO_CHANGES;
      }
      if (changed) {
        h.publicIp = itf.publicIp;
        h.publicPort = itf.publicPort;
        h.changes = [...h.changes, now];
        if (h.changes.length > this.limits.maxChanges) {
          this.deps.metrics.publicAddressChanges.inc({ outcome: "throttled" });
          if (!h.limited) {
            h.limited = true;
            this.schedule(conn, itf.devId, false);
          }
          continue;
        }
        this.deps.metrics.publicAddressChanges.inc({ outcome: "applied" });
        h.limited = false;
        this.schedule(conn, itf.devId, true);
      } else if (h.limited && h.changes.length <= this.limits.maxChanges) {
        // Calm again: apply the address it has now.
        h.limited = false;
        this.schedule(conn, itf.devId, true);
      }
    }
  }

  private schedule(conn: DeviceConnection, devId: string, applyAddress: boolean): void {
    const h = conn.publicAddresses[devId]!;
    const snapshot = { ...h, changes: [...h.changes] };
    void conn.serial("public address", () => this.write(conn, devId, snapshot, applyAddress));
  }

  private async write(conn: DeviceConnection, devId: string, h: PublicAddressHistory, applyAddress: boolean): Promise<void> {
    const org = { id: conn.device.orgId, accountId: conn.device.accountId, name: conn.device.orgName };
    const jobs = await this.deps.db.transaction().execute(async (trx) => {
      // The device and the far ends of its tunnels are all re-configured together.
      const locked = await lockWithNeighbours(trx, org.id, conn.deviceId);
      if (!locked) return [];
      const affected = locked.neighbours;
      let addressChanged = false;
      const interfaces = locked.interfaces.map((itf) => {
        if (itf.devId !== devId) return itf;
        const next = {
          ...itf,
          isPublicAddressRateLimited: h.limited,
          ...(applyAddress ? { PublicIP: h.publicIp, PublicPort: h.publicPort === null ? "" : String(h.publicPort) } : {}),
        };
        addressChanged = next.PublicIP !== itf.PublicIP || next.PublicPort !== itf.PublicPort;
        return next;
      });
      await trx
        .updateTable("devices")
        .set({ interfaces: toJson(interfaces) })
        .where("id", "=", conn.deviceId)
        .execute();
      await storeHistory(trx, conn);
      if (!addressChanged) return [];
      const queued = await queueConfigJobs(
        { ...systemCtx(this.deps, org), db: trx },
        {
          deviceIds: [conn.deviceId, ...affected],
          type: "modify",
          tasks: [{ kind: "public-address", summary: `public address of ${devId} is now ${h.publicIp}:${h.publicPort ?? "-"}` }],
        },
      );
      return queued.jobIds;
    });
    conn.logger.info(
      { devId, publicIp: h.publicIp, publicPort: h.publicPort, limited: h.limited, jobs: jobs.length },
      "public address",
    );
    this.events.emit("public-address-rate-limit", { deviceId: conn.deviceId, orgId: conn.orgId, devId, limited: h.limited });
  }
}

/** Persists the link's public-address history (device_state.public_addresses), creating the row when needed. */
export async function storeHistory(db: Db, conn: DeviceConnection): Promise<void> {
  await db
    .insertInto("device_state")
    .values({
      device_id: conn.deviceId,
      organization_id: conn.orgId,
      public_addresses: toJson(conn.publicAddresses),
    })
    .onConflict((oc) => oc.column("device_id").doUpdateSet({ public_addresses: toJson(conn.publicAddresses) }))
    .execute();
}
