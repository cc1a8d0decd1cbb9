/**
 * The pending-tunnel duty (checkPendingTunnels) reads only the facts of tunnels the SQL mirror of the
 * status calls pending, no longer every tunnel's (issue 14: 33 MB of facts per run at 10,000 devices).
 * It must mark, raise and resolve exactly what the TypeScript derivation over every tunnel says.
 * The duty is called directly on the real database; delivery (email, webhooks) is not involved: the
 * Notifier's deliverer and settings are used only when announcements are delivered, which this does not do.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { checkPendingTunnels, type TunnelSweep } from "../../src/notify/checks.ts";
import type { Announcement } from "../../src/notify/notifier.ts";
import { Notifier } from "../../src/notify/notifier.ts";
import { orgTunnelRange, type TunnelFactsRow, toTunnel, tunnelFacts } from "../../src/services/tunnels/query.ts";
import type { TestDevice } from "../support/devices.ts";
import { type TestUser, useTestServer } from "../support/test-server.ts";
import { createTunnels, settleDevices, tunnelBody, wanDevice } from "../support/tunnels.ts";

describe("pending-tunnel duty", () => {
  const t = useTestServer();
  let tenant: TestUser & { orgId: string };
  let devices: TestDevice[];
  let notifier: Notifier;

  /** What the duty decided before: every tunnel's facts through toTunnel. */
  const pendingByDerivation = async () => {
    const db = t.database.db;
    const range = await orgTunnelRange(db, tenant.orgId);
    const rows = (await db.selectFrom(tunnelFacts(tenant.orgId)).selectAll().execute()) as TunnelFactsRow[];
    return rows
      .filter((r) => toTunnel(r, tenant.orgId, range).isPending)
      .map((r) => r.id)
      .sort();
  };
  const marked = async () =>
    (
      await t.database.db
        .selectFrom("tunnels")
        .select("id")
        .where("organization_id", "=", tenant.orgId)
        .where("pending_since", "is not", null)
        .execute()
    )
      .map((r) => r.id)
      .sort();
  const openAlerts = async () =>
    (
      await t.database.db
        .selectFrom("notifications")
        .select("targets")
        .where("organization_id", "=", tenant.orgId)
        .where("event_type", "=", "pending-tunnel")
        .where("resolved", "=", false)
        .execute()
    )
      .map((n) => String((n.targets as { tunnelId?: string }).tunnelId))
      .sort();
  /** One whole sweep, in slices of `limit` tunnels as the duty runs it (each slice its own transaction). */
  const run = async (limit = 2) => {
    const announcements: Announcement[] = [];
    let from: TunnelSweep | null = null;
    let slices = 0;
    do {
      const slice = await t.database.db.transaction().execute((trx) => checkPendingTunnels(trx, notifier, 0, limit, from));
      announcements.push(...slice.announcements);
      from = slice.next;
      slices += 1;
    } while (from);
    return { announcements, slices };
  };

  beforeAll(async () => {
    notifier = new Notifier(undefined as never, undefined as never, t.deps.metrics, t.deps.logger);
    tenant = await t.createTenant("Pending duty");
    devices = [];
    for (const name of ["p-alpha", "p-bravo", "p-charlie", "p-delta"])
      devices.push(await wanDevice(t, { orgId: tenant.orgId, name }));
    const [alpha, bravo, charlie, delta] = devices as [TestDevice, TestDevice, TestDevice, TestDevice];
    await createTunnels(
      t,
      [tunnelBody(alpha, bravo), tunnelBody(charlie, bravo), tunnelBody(alpha, delta), tunnelBody(delta, bravo)],
      { token: tenant.token },
    );
    // alpha and bravo connected and applied; charlie never connected; delta's config job failed.
    await settleDevices(t, [alpha.id, bravo.id]);
    await settleDevices(t, [delta.id], "connected", "failed");
  });

  it("marks, raises and resolves exactly the tunnels the status derivation calls pending", async () => {
    const expected = await pendingByDerivation();
    // Some pending and some not, or the comparison would prove nothing.
    expect(expected.length).toBeGreaterThan(0);
    const all = await t.database.db.selectFrom("tunnels").select("id").where("organization_id", "=", tenant.orgId).execute();
    expect(expected.length).toBeLessThan(all.length);

    // Slices of two tunnels: the sweep takes several runs and reaches every tunnel once.
    const first = await run(2); // marks pending_since; nothing is past the grace yet (the mark was not there when read)
    expect(first.slices).toBeGreaterThan(1);
    expect(await marked()).toEqual(expected);
    const { announcements: raised } = await run(2);
    expect(await openAlerts()).toEqual(expected);
    expect(raised.filter((a) => a.event === "notification.raised")).toHaveLength(expected.length);

    // charlie and delta become healthy: every tunnel stops being pending, marks and alerts go.
    const [, , charlie, delta] = devices as [TestDevice, TestDevice, TestDevice, TestDevice];
    await settleDevices(t, [charlie.id]);
    await t.database.db.updateTable("jobs").set({ state: "complete" }).where("device_id", "=", delta.id).execute();
    const after = await pendingByDerivation();
    const { announcements: resolved, slices } = await run(Number.POSITIVE_INFINITY);
    expect(slices).toBe(1);
    expect(await marked()).toEqual(after);
    expect(await openAlerts()).toEqual(after);
    expect(resolved.filter((a) => a.event === "notification.resolved")).toHaveLength(expected.length - after.length);
    expect(after.length).toBeLessThan(expected.length);
  });
});
