/**
 * Migration 20261207-101: `notifications (device_id)` serves the rule
 * engine's read of the open status notifications of devices that connect
 * (`loadOpenConditions`) and the delete of a device's notifications with it.
 * The answer is checked, and the plan: with sequential scans priced out, a
 * read that no index serves still plans a scan of the whole table. What it
 * saves is measured by the benchmark (docs/bench.md), not asserted here.
 */
import { randomUUID } from "node:crypto";
import type { NotificationEvent } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { loadOpenConditions, openConditionsQuery } from "../../src/notify/open-conditions.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261207-101: notifications by device", () => {
  const t = useTestServer();

  async function notification(deviceId: string, eventType: NotificationEvent, key: string, resolved: boolean) {
    await t.database.db
      .insertInto("notifications")
      .values({
        id: randomUUID(),
        organization_id: t.admin.orgId,
        device_id: deviceId,
        event_type: eventType,
        title: eventType,
        details: key,
        severity: "warning",
        targets: toJson({ deviceId, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: key,
        resolved,
      })
      .execute();
  }

  /** The plan of `query` with sequential scans priced out, as text. */
  async function plan(query: { sql: string; parameters: readonly unknown[] }): Promise<string> {
    return t.database.db.connection().execute(async (db) => {
      await sql`set enable_seqscan = off`.execute(db);
      try {
        const { rows } = await db.executeQuery<{ "QUERY PLAN": string }>({
          sql: `explain ${query.sql}`,
          parameters: query.parameters,
          query: { kind: "RawNode" } as never,
          queryId: { queryId: "explain" },
        });
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      } finally {
        await sql`reset enable_seqscan`.execute(db);
      }
    });
  }

  it("loads the open status notifications of the devices asked, and only those", async () => {
    const [a, b, other] = [await insertValidDevice(t), await insertValidDevice(t), await insertValidDevice(t)];
    await notification(a.id, "tunnel-connection", `a-open`, false);
    await notification(a.id, "tunnel-rtt", `a-resolved`, true);
    await notification(a.id, "device-connection", `a-not-a-status-event`, false);
    await notification(b.id, "interface-down", `b-open`, false);
    await notification(other.id, "tunnel-connection", `other-open`, false);

    const open = await loadOpenConditions(t.database.db, [a.id, b.id]);
    expect(open.map((n) => [n.device_id, n.dedup_key, n.event_type, n.severity]).sort()).toEqual(
      [
        [a.id, "a-open", "tunnel-connection", "warning"],
        [b.id, "b-open", "interface-down", "warning"],
      ].sort(),
    );
    expect(await loadOpenConditions(t.database.db, [])).toEqual([]);
  });

  it("reads them, and deletes a device's notifications, through notifications_device_idx", async () => {
    const device = await insertValidDevice(t);
    const read = openConditionsQuery(t.database.db, [device.id]).compile();
    expect(await plan(read)).toContain("notifications_device_idx");
    const remove = t.database.db.deleteFrom("notifications").where("device_id", "=", device.id).compile();
    expect(await plan(remove)).toContain("notifications_device_idx");
  });
});
