/**
 * Shared by the tests that compare a devices page built as JSON by the
 * database with the object path (devices-summary-json, devices-detailed-json).
 */
import { randomUUID } from "node:crypto";
import { ListQueryRaw } from "@tern/protocol";
import { toJson } from "../../src/db/json.ts";
import { foldListQuery } from "../../src/http/list-query.ts";
import { serviceCtx } from "../../src/services/context.ts";
import { listDevices } from "../../src/services/devices/devices.ts";
import type { TestServer } from "./test-server.ts";

/** `count` unresolved notifications of the device; the second is read when `oneRead`. */
export async function addDeviceNotifications(
  t: TestServer,
  orgId: string,
  deviceId: string,
  count: number,
  { oneRead, key }: { oneRead: boolean; key: string },
): Promise<void> {
  for (let k = 0; k < count; k++)
    await t.database.db
      .insertInto("notifications")
      .values({
        id: randomUUID(),
        organization_id: orgId,
        device_id: deviceId,
        event_type: "device-connection",
        title: "Device disconnected",
        details: "",
        severity: "warning",
        targets: toJson({ deviceId, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: `${key}:${deviceId}:${k}`,
        is_read: k === 1 && oneRead,
        resolved: false,
      })
      .execute();
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
