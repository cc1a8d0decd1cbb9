/**
 * The address a DHCP WAN really has, as the device reports it. The config
 * compiler names a WAN's `IPv4` as the remote address of every tunnel that
 * ends there (compile/tunnel-endpoints.ts); for a static WAN that is the
 * configured address (the agent puts it back if it goes), but a DHCP WAN's
 * lease may change. When a status reports a new address for an assigned DHCP
 * WAN, it is written to the interface and the device and the far ends of its
 * tunnels are recompiled: a job goes only to a device whose config changed
 * (a far end that reaches it through its NAT's public address gets none).
 *
 * Changes are debounced per device (`debounceMs` of quiet, at most 4× that in
 * all), so a lease moving twice in a row, or several WANs changing together,
 * cost one transaction and at most one job per affected device. An empty
 * reported address (lease lost) never erases the known one. Decisions are made
 * in memory as reports arrive; only a change costs database work (once per
 * new address, also for interfaces that turn out not to be DHCP WANs).
 */
import { type DeviceInterface, type InterfaceState, parseIPv4 } from "@tern/protocol";
import { toJson } from "../../db/json.ts";
import type { AppDeps } from "../../deps.ts";
import { sharedString } from "../../memory/shared-string.ts";
import { systemCtx } from "../../services/context.ts";
import { queueConfigJobs } from "../../services/desired-config.ts";
import type { DeviceConnection } from "../connection.ts";
import { lockWithNeighbours } from "./tunnel-neighbours.ts";

/** A WAN address as reported: address and prefix length. */
export interface WanAddress {
  IPv4: string;
  IPv4Mask: number | null;
}

const key = (a: WanAddress) => `${a.IPv4}/${a.IPv4Mask ?? ""}`;

/**
 * The address stored for each of the device's interfaces, by devId. Every
 * interface is followed, not only today's DHCP WANs: an admin may put a WAN
 * on DHCP while the link is open; the database decides whether a change counts.
 */
export function initialWanAddresses(interfaces: readonly DeviceInterface[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const itf of interfaces) result[sharedString(itf.devId)] = sharedString(key(itf));
  return result;
}

function isDhcpWan(itf: DeviceInterface): boolean {
  return itf.isAssigned && itf.type === "WAN" && itf.dhcp;
}

interface Pending {
  changes: Map<string, WanAddress>;
  timer: NodeJS.Timeout;
  firstAt: number;
}

export class WanAddressTracker {
  private readonly pending = new Map<DeviceConnection, Pending>();
  private closed = false;

  constructor(
    private readonly deps: AppDeps,
    private readonly debounceMs: number,
    /** Registers database work so that closing the gateway waits for it. */
    private readonly track: (work: Promise<void>) => void,
  ) {}

  /** Compares a status' interfaces with the link's known addresses; a change starts (or extends) the debounce. */
  observe(conn: DeviceConnection, interfaces: readonly InterfaceState[], now = Date.now()): void {
    for (const itf of interfaces) {
      const known = conn.wanAddresses[itf.devId];
      if (!itf.IPv4 || parseIPv4(itf.IPv4) === null) continue;
      const reported = { IPv4: itf.IPv4, IPv4Mask: itf.IPv4Mask };
      if (key(reported) === known) continue;
      conn.wanAddresses[itf.devId] = sharedString(key(reported));
      this.schedule(conn, itf.devId, reported, now);
    }
  }

  /** Drops the timers of changes not yet written (gateway shutdown). */
  close(): void {
    this.closed = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
  }

  private schedule(conn: DeviceConnection, devId: string, address: WanAddress, now: number): void {
    if (this.closed) return;
    const p = this.pending.get(conn);
    const firstAt = p?.firstAt ?? now;
    if (p) clearTimeout(p.timer);
    const changes = p?.changes ?? new Map<string, WanAddress>();
    changes.set(devId, address);
    const wait = Math.max(0, Math.min(this.debounceMs, firstAt + 4 * this.debounceMs - now));
    const timer = setTimeout(() => {
      this.pending.delete(conn);
      this.track(conn.serial("wan address", () => this.write(conn, changes)));
    }, wait);
    this.pending.set(conn, { changes, timer, firstAt });
  }

  private async write(conn: DeviceConnection, changes: Map<string, WanAddress>): Promise<void> {
    const org = { id: conn.device.orgId, accountId: conn.device.accountId, name: conn.device.orgName };
    const result = await this.deps.db.transaction().execute(async (trx) => {
      const locked = await lockWithNeighbours(trx, org.id, conn.deviceId);
      if (!locked) return null;
      const affected = locked.neighbours;
      const applied: string[] = [];
      const interfaces = locked.interfaces.map((itf) => {
        const next = changes.get(itf.devId);
        // The database decides: an admin may have made the WAN static since the link opened.
        if (!next || !isDhcpWan(itf) || key(itf) === key(next)) return itf;
        applied.push(`${itf.name} ${itf.IPv4 || "-"} → ${next.IPv4}`);
        return { ...itf, IPv4: next.IPv4, IPv4Mask: next.IPv4Mask };
      });
      if (applied.length === 0) return null;
      await trx
        .updateTable("devices")
        .set({ interfaces: toJson(interfaces) })
        .where("id", "=", conn.deviceId)
        .execute();
      const summary = `WAN address of device ${conn.deviceId}: ${applied.join(", ")}`;
      const queued = await queueConfigJobs(
        { ...systemCtx(this.deps, org), db: trx },
        { deviceIds: [conn.deviceId, ...affected], type: "modify", tasks: [{ kind: "wan-address", summary }] },
      );
      return { applied, jobs: queued.jobIds.length };
    });
    if (result) conn.logger.info({ changes: result.applied, jobs: result.jobs }, "WAN address changed");
  }
}
