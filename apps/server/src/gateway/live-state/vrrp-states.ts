/**
 * VRRP states from status messages into `vrrp_members` (recordVrrpStates),
 * so `GET /vrrp/status` answers from the database on any instance. Statuses
 * repeat the same states every few seconds: only a list that differs from the
 * last one recorded on this link is written, in the device's serial chain
 * (never on the websocket path). A link's first status always differs, so a
 * reconnecting fleet's devices read their memberships together (one
 * statement per batch). Transitions become a `vrrp-state-changed` event for
 * the notification engine.
 */
import type { Status } from "@tern/protocol";
import { batchLookup } from "../../db/batch-lookup.ts";
import type { Db } from "../../db/schema.ts";
import { recordVrrpStates, vrrpMemberships } from "../../services/vrrp-status.ts";
import type { DeviceConnection } from "../connection.ts";
import type { GatewayEvents } from "../events.ts";

export class VrrpRecorder {
  private readonly memberships = batchLookup(
    (ids) => vrrpMemberships(this.db, ids),
    (m) => m.device_id,
  );

  constructor(
    private readonly db: Db,
    private readonly events: GatewayEvents,
  ) {}

  observe(conn: DeviceConnection, vrrp: Status["vrrp"]): void {
    // Most devices run no VRRP: the literal is one string for all of them, where each stringify made its own.
    const json = vrrp.length === 0 ? "[]" : JSON.stringify(vrrp);
    if (json === conn.lastVrrpJson) return;
    conn.lastVrrpJson = json;
    void conn.serial("vrrp states", async () => {
      try {
        const members = (await this.memberships.submit(conn.deviceId)).filter((m) => m.organization_id === conn.orgId);
        const changes = await recordVrrpStates(
          { db: this.db, org: { id: conn.orgId } },
          conn.deviceId,
          vrrp,
          new Date(),
          members,
        );
        if (changes.length) this.events.emit("vrrp-state-changed", { deviceId: conn.deviceId, orgId: conn.orgId, changes });
      } catch (err) {
        // Recorded again with the next status that differs, or the next link.
        if (conn.lastVrrpJson === json) conn.lastVrrpJson = undefined;
        throw err;
      }
    });
  }
}
