/**
 * Spec rows GET/PUT/DELETE /notifications ("device ID in entries", filterable
 * and sortable, bulk delete by filter) and the raise/resolve service the rule
 * engine calls.
 */
import type { Notification } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestDevice, type TestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { notificationDedupKey, raiseNotification, resolveNotification } from "../../services/notifications/events.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
const f = (...filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);

describe("raiseNotification / resolveNotification", () => {
  const t = useTestServer();
  let device: TestDevice;
  const ctx = () => ({ db: t.database.db, org: { id: t.admin.orgId } });
  beforeAll(async () => {
    device = await insertTestDevice(t, { name: "raise-dev" });
  });

  it("a repeat of an open condition increments count and last_seen_at instead of adding a row", async () => {
    const input = {
      eventType: "tunnel-rtt" as const,
      severity: "warning" as const,
      targets: { deviceId: device.id, tunnelId: crypto.randomUUID() },
      details: "RTT 350 ms",
    };
    const first = await raiseNotification(ctx(), input);
    expect(first).toMatchObject({ created: true, escalated: false });
    expect(first.notification).toMatchObject({
      deviceId: device.id,
      count: 1,
      title: "Tunnel round trip time",
      status: "unread",
    });
    await new Promise((r) => setTimeout(r, 5));
    const second = await raiseNotification(ctx(), { ...input, details: "RTT 380 ms" });
    expect(second.created).toBe(false);
    expect(second.notification.id).toBe(first.notification.id);
    expect(second.notification).toMatchObject({ count: 2, details: "RTT 380 ms" });
    expect(Date.parse(second.notification.lastSeenAt)).toBeGreaterThan(Date.parse(first.notification.lastSeenAt));
    const rows = await t.database.db
      .selectFrom("notifications")
      .select("id")
      .where("dedup_key", "=", notificationDedupKey(input))
      .execute();
    expect(rows).toHaveLength(1);
  });

  it("many raises of one condition at once still make one row (the open-key index holds)", async () => {
    const input = {
      eventType: "device-connection" as const,
      severity: "critical" as const,
      targets: { deviceId: device.id },
      details: "gone",
    };
    const results = await Promise.all(Array.from({ length: 6 }, () => raiseNotification(ctx(), input)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const row = await t.database.db
      .selectFrom("notifications")
      .selectAll()
      .where("dedup_key", "=", notificationDedupKey(input))
      .executeTakeFirstOrThrow();
    expect(row.count).toBe(6);
    await resolveNotification(ctx(), input);
  });

  it("a higher severity escalates and turns the notification unread again; the same severity keeps it read", async () => {
    const input = {
      eventType: "link-drop-rate" as const,
      targets: { deviceId: device.id, interfaceId: device.wan.id },
      details: "6 %",
    };
    const first = await raiseNotification(ctx(), { ...input, severity: "warning" });
    await t.database.db.updateTable("notifications").set({ is_read: true }).where("id", "=", first.notification.id).execute();
    const same = await raiseNotification(ctx(), { ...input, severity: "warning" });
    expect(same).toMatchObject({ created: false, escalated: false });
    expect(same.notification.status).toBe("read");
    const worse = await raiseNotification(ctx(), { ...input, severity: "critical", details: "25 %" });
    expect(worse).toMatchObject({ created: false, escalated: true });
    expect(worse.notification).toMatchObject({ severity: "critical", status: "unread", count: 3 });
  });

  it("resolve closes the open notification; the next occurrence opens a new one", async () => {
    const condition = { eventType: "bgp-neighbor-down" as const, targets: { deviceId: device.id, interfaceId: "10.0.0.9" } };
    const raised = await raiseNotification(ctx(), { ...condition, severity: "warning", details: "neighbor 10.0.0.9 down" });
    const resolved = await resolveNotification(ctx(), notificationDedupKey(condition));
    expect(resolved).toMatchObject({ id: raised.notification.id, resolved: true });
    expect(resolved?.resolvedAt).not.toBeNull();
    expect(await resolveNotification(ctx(), condition)).toBeNull();
    const again = await raiseNotification(ctx(), { ...condition, severity: "warning", details: "down again" });
    expect(again.created).toBe(true);
    expect(again.notification.id).not.toBe(raised.notification.id);
    expect(again.notification.count).toBe(1);
  });

  it("conditions with other targets or in another organization are separate", async () => {
    const tenant = await t.createTenant("Other");
    const base = { eventType: "interface-down" as const, severity: "warning" as const, details: "down" };
    const a = await raiseNotification(ctx(), { ...base, targets: { deviceId: device.id, interfaceId: "x" } });
    const b = await raiseNotification(ctx(), { ...base, targets: { deviceId: device.id, interfaceId: "y" } });
    const c = await raiseNotification(
      { db: t.database.db, org: { id: tenant.orgId } },
      { ...base, targets: { deviceId: null, interfaceId: "x" } },
    );
    expect(new Set([a.notification.id, b.notification.id, c.notification.id]).size).toBe(3);
    expect(c.notification).toMatchObject({ org: tenant.orgId, deviceId: null, count: 1 });
    expect(c.created).toBe(true);
  });
});

describe("GET/PUT/DELETE /notifications", () => {
  const t = useTestServer();
  let east: TestDevice;
  let west: TestDevice;
  const get = (query: Record<string, string | number> = {}) =>
    t.api<Notification[]>("GET", "/api/notifications", { token: t.admin.token, query });

  beforeAll(async () => {
    east = await insertTestDevice(t, { name: "east-router" });
    west = await insertTestDevice(t, { name: "west-router" });
    const ctx = { db: t.database.db, org: { id: t.admin.orgId } };
    await raiseNotification(ctx, {
      eventType: "device-connection",
      severity: "critical",
      targets: { deviceId: east.id },
      details: "east down",
    });
    await raiseNotification(ctx, {
      eventType: "tunnel-rtt",
      severity: "warning",
      targets: { deviceId: east.id, tunnelId: crypto.randomUUID() },
      details: "rtt",
    });
    await raiseNotification(ctx, { eventType: "job-failed", severity: "info", targets: { deviceId: west.id }, details: "job" });
    const repeated = {
      eventType: "tunnel-drop-rate" as const,
      severity: "warning" as const,
      targets: { deviceId: west.id },
      details: "loss",
    };
    for (let i = 0; i < 3; i++) await raiseNotification(ctx, repeated);
  });

  it("lists every notification with its device id and records-total; default newest first", async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("4");
    expect(res.body.map((n) => n.deviceId).sort()).toEqual([east.id, east.id, west.id, west.id].sort());
    expect(res.body[0]?.eventType).toBe("tunnel-drop-rate");
    const times = res.body.map((n) => Date.parse(n.lastSeenAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("sorts by severity rank and by count, both orders", async () => {
    const desc = await get({ sort: "severity", order: "desc" });
    expect(desc.body.map((n) => n.severity)).toEqual(["critical", "warning", "warning", "info"]);
    const asc = await get({ sortField: "severity", sortOrder: "asc" });
    expect(asc.body.map((n) => n.severity)).toEqual(["info", "warning", "warning", "critical"]);
    const byCount = await get({ sort: "count", order: "desc", limit: 1 });
    expect(byCount.body[0]).toMatchObject({ eventType: "tunnel-drop-rate", count: 3 });
  });

  it("filters with each op: ==, !=, contains, !contains, <, >, <=, >=, in; several are ANDed", async () => {
    const ids = async (filter: string) => (await get({ filter })).body.map((n) => n.eventType).sort();
    expect(await ids(f({ key: "eventType", op: "==", val: "job-failed" }))).toEqual(["job-failed"]);
    expect(await ids(f({ key: "severity", op: "!=", val: "warning" }))).toEqual(["device-connection", "job-failed"]);
    expect(await ids(f({ key: "device.name", op: "contains", val: "EAST" }))).toEqual(["device-connection", "tunnel-rtt"]);
    expect(await ids(f({ key: "device.name", op: "!contains", val: "east" }))).toEqual(["job-failed", "tunnel-drop-rate"]);
    expect(await ids(f({ key: "count", op: ">", val: 1 }))).toEqual(["tunnel-drop-rate"]);
    expect(await ids(f({ key: "count", op: "<", val: 2 }))).toHaveLength(3);
    expect(await ids(f({ key: "count", op: ">=", val: 3 }))).toEqual(["tunnel-drop-rate"]);
    expect(await ids(f({ key: "count", op: "<=", val: 3 }))).toHaveLength(4);
    expect(await ids(f({ key: "severity", op: "in", val: ["critical", "info"] }))).toEqual(["device-connection", "job-failed"]);
    expect(await ids(f({ key: "deviceId", op: "==", val: west.id }))).toEqual(["job-failed", "tunnel-drop-rate"]);
    expect(
      await ids(f({ key: "createdAt", op: ">=", val: "2000-01-01T00:00:00Z" }, { key: "resolved", op: "==", val: false })),
    ).toHaveLength(4);
    expect(await ids(f({ key: "status", op: "==", val: "unread" }, { key: "deviceId", op: "==", val: east.id }))).toEqual([
      "device-connection",
      "tunnel-rtt",
    ]);
  });

  it("pages with offset and limit; records-total counts the whole filtered set", async () => {
    const page = await get({ sort: "eventType", offset: 1, limit: 2 });
    expect(page.headers.get("records-total")).toBe("4");
    expect(page.body.map((n) => n.eventType)).toEqual(["job-failed", "tunnel-drop-rate"]);
  });

  it("refuses unknown keys and bad values with 400 naming the filter", async () => {
    const key = await t.api<ErrorBody>("GET", "/api/notifications", {
      token: t.admin.token,
      query: { filter: f({ key: "nope", op: "==", val: 1 }) },
    });
    expect(key.status).toBe(400);
    expect(key.body.code).toBe("VALIDATION_FAILED");
    expect(key.body.details[0]?.path).toBe("filter.0.key");
    const val = await t.api<ErrorBody>("GET", "/api/notifications", {
      token: t.admin.token,
      query: { filter: f({ key: "resolved", op: "==", val: "maybe" }) },
    });
    expect(val.body.details[0]?.path).toBe("filter.0.val");
    const ordered = await t.api<ErrorBody>("GET", "/api/notifications", {
      token: t.admin.token,
      query: { filter: f({ key: "severity", op: ">", val: "info" }) },
    });
    expect(ordered.status).toBe(400);
    expect(ordered.body.details[0]?.path).toBe("filter.0.op");
    const sort = await t.api<ErrorBody>("GET", "/api/notifications", { token: t.admin.token, query: { sort: "secret" } });
    expect(sort.status).toBe(400);
    expect(sort.body.details[0]?.path).toBe("sort");
  });

  it("PUT marks read by ids and unread by filter, and resolves", async () => {
    const all = (await get()).body;
    const target = all.find((n) => n.eventType === "job-failed")!;
    const byIds = await t.api<{ updated: number }>("PUT", "/api/notifications", {
      token: t.admin.token,
      body: { ids: [target.id], status: "read" },
    });
    expect(byIds.status).toBe(200);
    expect(byIds.body.updated).toBe(1);
    expect((await get({ filter: f({ key: "status", op: "==", val: "read" }) })).body.map((n) => n.id)).toEqual([target.id]);

    const allRead = await t.api<{ updated: number }>("PUT", "/api/notifications", {
      token: t.admin.token,
      query: { filter: "[]" },
      body: { status: "read" },
    });
    expect(allRead.body.updated).toBe(4);
    const unread = await t.api<{ updated: number }>("PUT", "/api/notifications", {
      token: t.admin.token,
      query: { filter: f({ key: "deviceId", op: "==", val: east.id }) },
      body: { status: "unread", resolved: true },
    });
    expect(unread.body.updated).toBe(2);
    const east2 = (await get({ filter: f({ key: "deviceId", op: "==", val: east.id }) })).body;
    expect(east2.every((n) => n.status === "unread" && n.resolved && n.resolvedAt !== null)).toBe(true);
    const west2 = (await get({ filter: f({ key: "deviceId", op: "==", val: west.id }) })).body;
    expect(west2.every((n) => n.status === "read" && !n.resolved)).toBe(true);
  });

  it("PUT needs exactly one of ids or filter, and a status or resolved", async () => {
    const neither = await t.api<ErrorBody>("PUT", "/api/notifications", { token: t.admin.token, body: { status: "read" } });
    expect(neither.status).toBe(400);
    expect(neither.body.code).toBe("VALIDATION_FAILED");
    const both = await t.api<ErrorBody>("PUT", "/api/notifications", {
      token: t.admin.token,
      query: { filter: "[]" },
      body: { ids: [crypto.randomUUID()], status: "read" },
    });
    expect(both.status).toBe(400);
    const nothing = await t.api<ErrorBody>("PUT", "/api/notifications", {
      token: t.admin.token,
      query: { filter: "[]" },
      body: {},
    });
    expect(nothing.status).toBe(400);
    expect(nothing.body.details[0]?.path).toBe("status");
    const badStatus = await t.api<ErrorBody>("PUT", "/api/notifications", {
      token: t.admin.token,
      query: { filter: "[]" },
      body: { status: "seen" },
    });
    expect(badStatus.body.details[0]?.path).toBe("status");
  });

  it("changes never reach another organization", async () => {
    const tenant = await t.createTenant("Elsewhere");
    const raised = await raiseNotification(
      { db: t.database.db, org: { id: tenant.orgId } },
      { eventType: "job-failed", severity: "warning", targets: {}, details: "theirs" },
    );
    const res = await t.api<{ updated: number }>("PUT", "/api/notifications", {
      token: t.admin.token,
      body: { ids: [raised.notification.id], status: "read" },
    });
    expect(res.body.updated).toBe(0);
    await t.api("DELETE", "/api/notifications", { token: t.admin.token, query: { filter: "[]" } });
    const theirs = await t.api<Notification[]>("GET", "/api/notifications", { token: tenant.token });
    expect(theirs.body.map((n) => [n.id, n.status])).toEqual([[raised.notification.id, "unread"]]);
  });
});

describe("DELETE /notifications", () => {
  const t = useTestServer();

  it("deletes what the filter matches; the filter is required ([] = all)", async () => {
    const ctx = { db: t.database.db, org: { id: t.admin.orgId } };
    for (const [eventType, severity] of [
      ["job-failed", "info"],
      ["pending-tunnel", "warning"],
      ["device-connection", "critical"],
    ] as const)
      await raiseNotification(ctx, { eventType, severity, targets: {}, details: eventType });
    const missing = await t.api<ErrorBody>("DELETE", "/api/notifications", { token: t.admin.token });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0]?.path).toBe("filter");
    const bad = await t.api<ErrorBody>("DELETE", "/api/notifications", { token: t.admin.token, query: { filter: "{oops" } });
    expect(bad.status).toBe(400);

    const some = await t.api<{ deleted: number }>("DELETE", "/api/notifications", {
      token: t.admin.token,
      query: { filter: f({ key: "severity", op: "in", val: ["info", "warning"] }) },
    });
    expect(some.body.deleted).toBe(2);
    const left = await t.api<Notification[]>("GET", "/api/notifications", { token: t.admin.token });
    expect(left.body.map((n) => n.eventType)).toEqual(["device-connection"]);
    const rest = await t.api<{ deleted: number }>("DELETE", "/api/notifications", {
      token: t.admin.token,
      query: { filters: "[]" },
    });
    expect(rest.body.deleted).toBe(1);
    expect((await t.api("GET", "/api/notifications", { token: t.admin.token })).headers.get("records-total")).toBe("0");
  });

  it("a viewer may list but not mark or delete", async () => {
    const viewer = await t.addMember("viewer");
    expect((await t.api("GET", "/api/notifications", { token: viewer.token })).status).toBe(200);
    expect(
      (await t.api("PUT", "/api/notifications", { token: viewer.token, query: { filter: "[]" }, body: { status: "read" } }))
        .status,
    ).toBe(403);
    expect((await t.api("DELETE", "/api/notifications", { token: viewer.token, query: { filter: "[]" } })).status).toBe(403);
  });
});
