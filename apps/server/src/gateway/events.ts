/**
 * What the gateway and the job engine tell the rest of the server: the seam
 * the notification engine (device connection, job failed, failed
 * self-healing, VRRP and BGP changes, tunnel figures) and the tunnel-status
 * computation attach to. Listeners run synchronously on the gateway's path, so
 * they must be quick; a throwing listener is logged and never breaks the link.
 */
import type { JobError, JobState, JobType, Status, TunnelReport } from "@tern/protocol";
import type { Logger } from "pino";
import type { VrrpStateChange } from "../services/vrrp-status.ts";

export interface DeviceRef {
  deviceId: string;
  orgId: string;
}

export interface GatewayEventMap {
  /** A device said hello and was welcomed on this instance. */
  "device-connected": DeviceRef & { instanceId: string; agentVersion: string; appliedHash: string | null };
  /** A device's link ended (on this instance, or found dead by the stale-link duty on any). */
  "device-disconnected": DeviceRef & { reason: string };
  /**
   * A status was taken in; `tunnels` holds only the device's own tunnels, with the side it is on. Emitted
   * as the status arrives, BEFORE the batched writer stores it: a listener that reads the device's live
   * state or tunnel figures from the database (or makes others do so, e.g. a live event) listens to
   * "live-state-written" instead.
   */
  status: DeviceRef & { status: Status; tunnels: (TunnelReport & { side: "a" | "b" })[]; receivedAt: Date };
  /**
   * A flush of the batched live-state writer committed: these devices' state (device_state) and these
   * tunnel ends' latest figures (tunnel_latest) are now readable. Several statuses of a device within a
   * flush interval come as their newest only.
   */
  "live-state-written": {
    devices: DeviceRef[];
    tunnelEnds: { tunnelId: string; deviceId: string; side: "a" | "b"; up: boolean; at: Date }[];
  };
  /** Jobs reached complete or failed (including corrections of timed-out jobs). */
  "jobs-finished": DeviceRef & {
    jobs: {
      id: string;
      type: JobType;
      state: Extract<JobState, "complete" | "failed">;
      error: JobError | null;
      corrected: boolean;
    }[];
  };
  /** Automatic re-syncs did not bring the device to its desired config: auto-sync is now paused. */
  "self-healing-failed": DeviceRef & { desiredHash: string; appliedHash: string | null; attempts: number };
  /** Members' VRRP states changed (recorded in vrrp_members by status ingestion). */
  "vrrp-state-changed": DeviceRef & { changes: VrrpStateChange[] };
  /**
   * A registration presented the machine id of known devices (`knownDeviceIds`) without their key:
   * it became the new pending device `deviceId` (services/devices/registration.ts).
   */
  "identity-conflict": DeviceRef & { knownDeviceIds: string[]; machineId: string; hostname: string; remote: string };
  /** An interface's public address changes too often (limited) or calmed down (not limited). */
  "public-address-rate-limit": DeviceRef & { devId: string; limited: boolean };
}

export type GatewayEventName = keyof GatewayEventMap;
type Listener<K extends GatewayEventName> = (event: GatewayEventMap[K]) => void;

export class GatewayEvents {
  private readonly listeners = new Map<GatewayEventName, Set<Listener<never>>>();

  constructor(private readonly logger: Logger) {}

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends GatewayEventName>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  emit<K extends GatewayEventName>(name: K, event: GatewayEventMap[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const listener of set) {
      try {
        (listener as Listener<K>)(event);
      } catch (err) {
        this.logger.error({ err, event: name }, "gateway event listener failed");
      }
    }
  }
}
