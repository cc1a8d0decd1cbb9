/**
 * VRRP states from status messages into `vrrp_members` (recordVrrpStates),
 * so `GET /vrrp/status` answers from the database on any instance. Statuses
 * repeat the same states every few seconds: only a list that differs from the
 * last one recorded on this link is written, in the device's serial chain
 * (never on the websocket path). Transitions become a `vrrp-state-changed`
 * event for the notification engine.
 */
import type { Status } from "@tern/protocol";
import type { Db } from "../../db/schema.ts";
import { recordVrrpStates } from "../../services/vrrp-status.ts";
import type { DeviceConnection } from "../connection.ts";
import type { GatewayEvents } from "../events.ts";

export function observeVrrp(conn: DeviceConnection, vrrp: Status["vrrp"], db: Db, events: GatewayEvents): void {
  const json = JSON.stringify(vrrp);
  if (json === conn.lastVrrpJson) return;
  conn.lastVrrpJson = json;
  void conn.serial("vrrp states", async () => {
    try {
      const changes = await recordVrrpStates({ db, org: { id: conn.orgId } }, conn.deviceId, vrrp);
      if (changes.length) events.emit("vrrp-state-changed", { deviceId: conn.deviceId, orgId: conn.orgId, changes });
    } catch (err) {
      // Recorded again with the next status that differs, or the next link.
      if (conn.lastVrrpJson === json) conn.lastVrrpJson = undefined;
      throw err;
    }
  });
}
