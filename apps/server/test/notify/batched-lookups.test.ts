/**
 * The rule engine's look-ups batched across devices (issue 14: a reconnecting
 * fleet's first statuses ran several single-device statements each) give the
 * same answers as one device at a time: contexts, and resolves (each item
 * resolves its own organization's keys, a key asked twice is resolved once).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadDeviceContext, loadDeviceContexts } from "../../src/notify/device-context.ts";
import { notificationDedupKey, raiseNotification, resolveNotificationsMany } from "../../src/services/notifications/events.ts";
import type { TestDevice } from "../support/devices.ts";
import { type TestUser, useTestServer } from "../support/test-server.ts";
import { createTunnels, tunnelBody, wanDevice } from "../support/tunnels.ts";

describe("batched look-ups of the rule engine", () => {
  const t = useTestServer();
  let a: TestUser & { orgId: string };
  let b: TestUser & { orgId: string };
  let devices: TestDevice[];
  let other: TestDevice;

  beforeAll(async () => {
    a = await t.createTenant("Batch A");
    b = await t.createTenant("Batch B");
    devices = [];
    for (const name of ["b-alpha", "b-bravo", "b-charlie"]) devices.push(await wanDevice(t, { orgId: a.orgId, name }));
    other = await wanDevice(t, { orgId: b.orgId, name: "b-other" });
    const [alpha, bravo, charlie] = devices as [TestDevice, TestDevice, TestDevice];
    await createTunnels(t, [tunnelBody(alpha, bravo), tunnelBody(charlie, alpha)], { token: a.token });
  });

  it("loads the contexts of several devices as it loads each alone, and none across organizations", async () => {
    const db = t.database.db;
    const refs = [...devices.map((d) => ({ orgId: a.orgId, deviceId: d.id })), { orgId: b.orgId, deviceId: other.id }];
    const batch = await loadDeviceContexts(db, [...refs, { orgId: b.orgId, deviceId: devices[0]!.id }]);
    const singles = await Promise.all(refs.map((r) => loadDeviceContext(db, r.orgId, r.deviceId)));
    const comparable = (c: Awaited<ReturnType<typeof loadDeviceContext>>) =>
      c && { ...c, loadedAt: 0, tunnels: [...c.tunnels.values()].sort((x, y) => x.num - y.num) };
    expect(batch.slice(0, refs.length).map(comparable)).toEqual(singles.map(comparable));
    // alpha is an end of both tunnels, on side a of one and b of the other; bravo and charlie of one each.
    expect(batch.slice(0, 3).map((c) => [...c!.tunnels.values()].map((x) => x.side).sort())).toEqual([["a", "b"], ["b"], ["a"]]);
    expect(batch[3]!.tunnels.size).toBe(0);
    // Another organization's device is not found under this one.
    expect(batch[4]).toBeNull();
  });

  it("resolves each item's keys in its own organization, once per open notification", async () => {
    const db = t.database.db;
    const condition = (ip: string) => ({ eventType: "bgp-neighbor-down" as const, targets: { bgpNeighbor: ip } });
    for (const org of [a.orgId, b.orgId])
      for (const ip of ["192.0.2.1", "192.0.2.2"])
        await raiseNotification({ db, org: { id: org } }, { ...condition(ip), severity: "warning", details: "down" });
    const k1 = notificationDedupKey(condition("192.0.2.1"));
    const k2 = notificationDedupKey(condition("192.0.2.2"));
    const resolved = await resolveNotificationsMany(db, [
      { orgId: a.orgId, dedupKeys: [k1] },
      { orgId: b.orgId, dedupKeys: [k2, "not-a-key"] },
      { orgId: a.orgId, dedupKeys: [k1] },
      { orgId: a.orgId, dedupKeys: [] },
    ]);
    expect(resolved.map((r) => r.map((n) => [n.org, n.targets.bgpNeighbor]))).toEqual([
      [[a.orgId, "192.0.2.1"]],
      [[b.orgId, "192.0.2.2"]],
      [],
      [],
    ]);
    const open = await db
      .selectFrom("notifications")
      .select(["organization_id", "dedup_key"])
      .where("organization_id", "in", [a.orgId, b.orgId])
      .where("event_type", "=", "bgp-neighbor-down")
      .where("resolved", "=", false)
      .execute();
    // What nobody asked for stays open: a's second neighbor, b's first.
    expect(open.map((n) => [n.organization_id, n.dedup_key]).sort()).toEqual(
      [
        [a.orgId, k2],
        [b.orgId, k1],
      ].sort(),
    );
  });
});
