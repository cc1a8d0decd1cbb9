/**
 * Shared by the tests that compare a devices page built as JSON by the
 * database with the object path (devices-summary-json, devices-detailed-json),
 * and the notifications the device list counts (devices-list).
 */
import { randomUUID } from "node:crypto";
import { ListQueryRaw } from "@tern/protocol";
import { toJson } from "../../src/db/json.ts";
import { foldListQuery } from "../../src/http/list-query.ts";
import { serviceCtx } from "../../src/services/context.ts";
import { listDevices } from "../../src/services/devices/devices.ts";
import type { TestServer } from "./test-server.ts";

/** One "device disconnected" notification of the device, unread and unresolved unless said. */
export async function insertNotification(
  t: TestServer,
  orgId: string,
  deviceId: string,
  state: { read?: boolean; resolved?: boolean },
): Promise<void> {
  const id = randomUUID();
  await t.database.db
    .insertInto("notifications")
    .values({
      id,
      organization_id: orgId,
      device_id: deviceId,
      event_type: "device-connection",
      title: "Device disconnected",
      details: "",
      severity: "warning",
      targets: toJson({ deviceId, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
      dedup_key: `test:${id}`,
      is_read: state.read ?? false,
      resolved: state.resolved ?? false,
    })
    .execute();
}

/** `count` unresolved notifications of the device; the second is read when `oneRead`. */
export async function addDeviceNotifications(
  t: TestServer,
  orgId: string,
  deviceId: string,
  count: number,
  { oneRead }: { oneRead: boolean },
): Promise<void> {
  for (let k = 0; k < count; k++) await insertNotification(t, orgId, deviceId, { read: k === 1 && oneRead });
}

/** What the object path (`listDevices`) answers for a page's query, as the organization's owner. */
export function objectPathDevices<R extends "summary" | "detailed">(
  t: TestServer,
  org: { orgId: string; accountId: string; name: string },
  response: R,
) {
  return (query: Record<string, string>) => {
    const raw = ListQueryRaw.parse(query);
    const access = { org: { id: org.orgId, accountId: org.accountId, name: org.name } };
    const ctx = serviceCtx(t.deps, { ...access, actor: { kind: "system", label: "test" }, role: "owner" } as never);
    return listDevices(ctx, {
      query: foldListQuery({ ...raw, ...(query.after ? { after: query.after } : {}) }),
      response,
      ...(query.ids ? { ids: query.ids.split(",") } : {}),
    });
  };
}
