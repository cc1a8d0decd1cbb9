/**
 * GET /api/notifications is built as JSON by the database
 * (services/notifications/list-json.ts). It must answer what the object path
 * (`listNotifications`, `toNotification`) answers: same notifications in the
 * same order, same values, same total and next cursor, for filters, sorts
 * (severity by rank), pages and cursors, over notifications of a device and
 * of the organization, targets with a BGP neighbour, without one and with a
 * JSON null, read and unread, resolved or not, and texts needing JSON escapes.
 */
import { randomUUID } from "node:crypto";
import { ListQueryRaw, type Notification } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { foldListQuery, RECORDS_NEXT_HEADER } from "../../http/list-query.ts";
import { serviceCtx } from "../../services/context.ts";
import { listNotifications } from "../../services/notifications/notifications.ts";

describe("GET /api/notifications (JSON built by the database)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  const ids: string[] = [];
  const tunnelId = randomUUID();

  beforeAll(async () => {
    tenant = await t.createTenant("Notification JSON");
    const device = await insertValidDevice(t, { name: 'quote "q" ✓', orgId: tenant.orgId });
    const severities = ["info", "warning", "critical"] as const;
    for (let i = 0; i < 9; i++) {
      const id = randomUUID();
      ids.push(id);
      const targets: Record<string, unknown> = {
        deviceId: i === 4 ? null : device.id,
        tunnelId: i % 3 === 0 ? tunnelId : null,
        interfaceId: null,
        vrrpGroupId: null,
      };
      if (i === 1) targets.bgpNeighbor = "192.0.2.7";
      if (i === 2) targets.bgpNeighbor = null;
      await t.database.db
        .insertInto("notifications")
        .values({
          id,
          organization_id: tenant.orgId,
          device_id: i === 4 ? null : device.id,
          event_type: i % 2 ? "tunnel-loss" : "device-connection",
          title: i === 3 ? 'Tunnel "7" lost\tpackets' : `Event ${i}`,
          details: i === 5 ? "line one\nline two ü" : "",
          severity: severities[i % 3]!,
          targets: toJson(targets),
          dedup_key: `json:${i}`,
          count: 1 + (i % 4),
          is_read: i % 2 === 0,
          resolved: i >= 6,
          resolved_at: i >= 6 ? new Date(Date.UTC(2026, 0, 3, 0, 0, i)) : null,
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
          // Two notifications seen at the same instant: the tiebreaker orders them.
          last_seen_at: new Date(Date.UTC(2026, 0, 2, 0, 0, i === 7 ? 3 : i)),
        })
        .execute();
    }
  });

  /** What the object path answers for the same query. */
  async function expected(query: Record<string, string>) {
    const raw = ListQueryRaw.parse(query);
    const access = { org: { id: tenant.orgId, accountId: tenant.accountId, name: "Notification JSON" } };
    const ctx = serviceCtx(t.deps, { ...access, actor: { kind: "system", label: "test" }, role: "owner" } as never);
    return listNotifications(ctx, foldListQuery({ ...raw, ...(query.after ? { after: query.after } : {}) }));
  }

  const filter = (key: string, op: string, val: unknown) => JSON.stringify([{ key, op, val }]);
  const cases: Record<string, string>[] = [
    {},
    { limit: "4" },
    { limit: "4", offset: "4" },
    { sort: "severity", order: "desc" },
    { sort: "count" },
    { sort: "resolvedAt", order: "desc" },
    { filter: filter("severity", "==", "critical") },
    { filter: filter("status", "==", "unread") },
    { filter: filter("device.name", "contains", "q") },
    { filter: filter("tunnelId", "==", tunnelId) },
    { offset: "40" },
  ];

  it("answers what the object path answers: same rows, order, values, total and next cursor", async () => {
    for (const query of cases) {
      const label = JSON.stringify(query);
      const res = await t.api<Notification[]>("GET", "/api/notifications", { token: tenant.token, query });
      expect(res.status, label).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const want = await expected(query);
      expect(res.body, label).toEqual(want.items);
      expect(res.headers.get("records-total"), label).toBe(String(want.total));
      expect(res.headers.get(RECORDS_NEXT_HEADER), label).toBe(want.next);
    }
  });

  it("covers the values it claims to: BGP neighbour given, absent or null; no device; escapes", async () => {
    const res = await t.api<Notification[]>("GET", "/api/notifications", { token: tenant.token });
    const byId = new Map(res.body.map((n) => [n.id, n]));
    expect(byId.get(ids[1]!)?.targets.bgpNeighbor).toBe("192.0.2.7");
    expect(byId.get(ids[2]!)?.targets.bgpNeighbor).toBeNull();
    expect(byId.get(ids[0]!)?.targets).toEqual({
      deviceId: expect.any(String),
      tunnelId,
      interfaceId: null,
      vrrpGroupId: null,
      bgpNeighbor: null,
    });
    expect(byId.get(ids[4]!)).toMatchObject({ deviceId: null, status: "read", resolved: false, resolvedAt: null });
    expect(byId.get(ids[3]!)?.title).toBe('Tunnel "7" lost\tpackets');
    expect(byId.get(ids[6]!)).toMatchObject({ resolved: true, resolvedAt: "2026-01-03T00:00:06.000Z", count: 3 });
  });

  it("walks the same pages by cursor", async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 6; page++) {
      const query: Record<string, string> = { limit: "2", sort: "lastSeenAt", ...(after ? { after } : {}) };
      const res = await t.api<Notification[]>("GET", "/api/notifications", { token: tenant.token, query });
      const want = await expected(query);
      expect(res.body).toEqual(want.items);
      seen.push(...res.body.map((n) => n.id));
      const next = res.headers.get(RECORDS_NEXT_HEADER);
      expect(next).toBe(want.next);
      if (!next) break;
      after = next;
    }
    expect([...seen].sort()).toEqual([...ids].sort());
  });
});
