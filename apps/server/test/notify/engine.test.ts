/**
 * The notification engine on the real server, driven by simulated devices
 * onboarded through the API: notifications raised, counted, escalated and
 * resolved from status reports, job results and disconnections, delivered by
 * e-mail to a real SMTP server and by signed webhook, with the delivery log.
 */

import { randomUUID } from "node:crypto";
import type { Notification, Tunnel } from "@tern/protocol";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notificationDedupKey } from "../../src/services/notifications/events.ts";
import { waitUntil } from "../support/gateway.ts";
import { type OnboardedDevice, onboardFleet } from "../support/onboarding.ts";
import { createNotifyWorld, type NotifyWorld, RECIPIENT } from "./support.ts";

let w: NotifyWorld;
let fleet: Simulator;
let devices: OnboardedDevice[];
let tunnel: Tunnel;

beforeAll(async () => {
  w = await createNotifyWorld();
  // Thresholds and channels as an admin sets them: RTT mailed at once, the grace period of a disconnection 1 s.
  const rules = await w.api.call("PUT", "/api/notificationsConf", {
    body: {
      rules: {
        "tunnel-rtt": { warningThreshold: 300, criticalThreshold: 600, immediateEmail: true, sendWebHook: true },
        "device-connection": { warningThreshold: 1, severity: "critical", immediateEmail: true, sendWebHook: true },
        "job-failed": { severity: "warning", sendWebHook: true },
      },
    },
  });
  expect(rules.status).toBe(200);
  // No periodic status: each test sends the ones it counts.
  ({ fleet, devices } = await onboardFleet(w.api, w.g.server.url, 2, { statusIntervalMs: 3_600_000 }));
  await w.g.waitForJobs(
    devices.flatMap((d) => d.jobIds),
    "complete",
  );
  const created = await w.api.call<{ jobIds: string[]; tunnels: { id: string }[] }>("POST", "/api/tunnels", {
    body: { deviceA: devices[0]!.id, interfaceA: devices[0]!.wanId, deviceB: devices[1]!.id, interfaceB: devices[1]!.wanId },
  });
  expect(created.status).toBe(202);
  await w.g.waitForJobs(created.body.jobIds, "complete");
  await waitUntil(
    () => fleet.devices.every((d) => d.tunnels.length === 1),
    (ok) => ok,
  );
  tunnel = (await w.api.call<Tunnel>("GET", `/api/tunnels/${created.body.tunnels[0]!.id}`)).body;
  // Baseline: healthy figures, so the engine knows both devices.
  fleet.setTunnelMetrics({ up: true, rtt: 20, loss: 0, jitter: 1 });
  for (const d of fleet.devices) await w.settle(d);
});

afterAll(async () => {
  await w?.close();
});

const one = async (filter: Parameters<NotifyWorld["notifications"]>[0]) => {
  const list = await w.notifications(filter);
  expect(list.length).toBeLessThanOrEqual(1);
  return list[0] as Notification | undefined;
};

describe("tunnel round-trip time", () => {
  it("is raised, escalated, counted on flaps and resolved; each new or higher alert is mailed and posted", async () => {
    const a = fleet.device(0);
    const deviceId = devices[0]!.id;
    const mails = w.smtp.received.length;
    const hooks = w.webhook.received.length;

    a.setTunnelMetrics({ rtt: 350 });
    await w.settle(a);
    let n = await one({ eventType: "tunnel-rtt", deviceId, resolved: false });
    expect(n).toMatchObject({
      severity: "warning",
      count: 1,
      status: "unread",
      targets: { deviceId, tunnelId: tunnel.id },
      details: `tunnel ${tunnel.num} to ${devices[1]!.name}: round-trip time 350 ms (warning 300 ms, critical 600 ms)`,
    });

    // Hovering around the threshold: no flapping, no new alert.
    for (const rtt of [290, 305, 280]) {
      a.setTunnelMetrics({ rtt });
      await w.settle(a);
    }
    expect((await one({ eventType: "tunnel-rtt", deviceId, resolved: false }))?.count).toBe(1);

    a.setTunnelMetrics({ rtt: 700 });
    await w.settle(a);
    n = await one({ eventType: "tunnel-rtt", deviceId, resolved: false });
    expect(n).toMatchObject({ severity: "critical", count: 2 });

    // Good once, bad again before the all-clear: the same notification, counted.
    a.setTunnelMetrics({ rtt: 20 });
    await w.settle(a);
    a.setTunnelMetrics({ rtt: 650 });
    await w.settle(a);
    n = await one({ eventType: "tunnel-rtt", deviceId, resolved: false });
    expect(n).toMatchObject({ severity: "critical", count: 3 });

    a.setTunnelMetrics({ rtt: 20 });
    await w.settle(a);
    await w.settle(a);
    expect(await w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: false })).toEqual([]);
    const resolved = await one({ eventType: "tunnel-rtt", deviceId, resolved: true });
    expect(resolved).toMatchObject({ id: n!.id, count: 3, resolved: true });
    expect(resolved!.resolvedAt).not.toBeNull();

    // Raised (warning), escalated (critical), resolved: three e-mails and three webhook calls; the flap sent none.
    await waitUntil(
      () => w.smtp.received.length - mails,
      (k) => k >= 3,
      10_000,
      "three e-mails",
    );
    const subjects = w.smtp.received.slice(mails).map((m) => m.mail.subject);
    expect(subjects).toEqual([
      `[Tern] WARNING: Tunnel round trip time on ${devices[0]!.name}`,
      `[Tern] CRITICAL: Tunnel round trip time on ${devices[0]!.name}`,
      `[Tern] Resolved: Tunnel round trip time on ${devices[0]!.name}`,
    ]);
    expect(w.smtp.received[mails]!.envelopeTo).toEqual([RECIPIENT]);
    expect(w.smtp.received[mails]!.mail.text).toContain("round-trip time 350 ms");
    const posted = w.webhook.received.slice(hooks);
    expect(posted.every((p) => p.verified.ok)).toBe(true);
    expect(posted.map((p) => JSON.parse(p.body).event)).toEqual([
      "notification.raised",
      "notification.raised",
      "notification.resolved",
    ]);
    expect(JSON.parse(posted[1]!.body).notification).toMatchObject({ id: n!.id, severity: "critical", eventType: "tunnel-rtt" });

    // Every attempt is in the delivery log. A row is written once the channel answered, which is after the
    // SMTP server or the receiver above has the message: wait for all six.
    const readLog = () =>
      w.g.database.db
        .selectFrom("notification_deliveries")
        .selectAll()
        .where("notification_id", "=", n!.id)
        .orderBy("id")
        .execute();
    const log = await waitUntil(readLog, (rows) => rows.length >= 6, 10_000, "six delivery log rows");
    expect(log.map((r) => [r.channel, r.event, r.status])).toEqual(
      expect.arrayContaining([
        ["email", "notification.raised", "delivered"],
        ["webhook", "notification.raised", "delivered"],
        ["email", "notification.resolved", "delivered"],
        ["webhook", "notification.resolved", "delivered"],
      ]),
    );
    expect(log).toHaveLength(6);
    expect(log.every((r) => r.organization_id === w.g.org.id && r.attempt === 1)).toBe(true);
    expect(log.find((r) => r.channel === "webhook")?.response_code).toBe(200);
    expect(log.find((r) => r.channel === "email")?.response_code).toBe(250);
  });

  it("a tunnel's own thresholds take precedence over the organization's rule", async () => {
    const b = fleet.device(1);
    const deviceId = devices[1]!.id;
    const set = await w.api.call("PUT", "/api/tunnels/notifications", {
      body: { ids: [tunnel.id], notifications: { rtt: { warning: 40, critical: 80 }, dropRate: null } },
    });
    expect(set.status).toBe(200);
    // The engine reads thresholds with the device's context: reconnecting starts a fresh one.
    await b.disconnect();
    await b.connect();
    b.setTunnelMetrics({ rtt: 50 });
    await w.settle(b);
    await waitUntil(
      () => one({ eventType: "tunnel-rtt", deviceId, resolved: false }),
      (n) => n !== undefined,
    );
    expect(await one({ eventType: "tunnel-rtt", deviceId, resolved: false })).toMatchObject({
      severity: "warning",
      details: expect.stringContaining("(warning 40 ms, critical 80 ms)"),
    });
    b.setTunnelMetrics({ rtt: 10 });
    await w.settle(b);
    await w.settle(b);
    expect(await w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: false })).toEqual([]);
    await w.api.call("PUT", "/api/tunnels/notifications", {
      body: { ids: [tunnel.id], notifications: { rtt: null, dropRate: null } },
    });
  });
});

describe("device contexts", () => {
  it("new thresholds and the far end's new name hold from the next statuses, without a reconnect (tern_context)", async () => {
    const b = fleet.device(1);
    const deviceId = devices[1]!.id;
    const farName = devices[0]!.name;
    const renamed = `${farName}-renamed`;
    try {
      // The context of device 1 is fresh (its statuses in beforeAll and the tests before): only the triggers'
      // notifications can make it read again before its 10-minute age.
      expect((await w.api.call("PUT", `/api/devices/${devices[0]!.id}`, { body: { name: renamed } })).status).toBe(200);
      const set = await w.api.call("PUT", "/api/tunnels/notifications", {
        body: { ids: [tunnel.id], notifications: { rtt: { warning: 40, critical: 80 }, dropRate: null } },
      });
      expect(set.status).toBe(200);
      b.setTunnelMetrics({ rtt: 50 });
      // The notification reaches the engine a moment after the API answers: statuses until it has.
      const raised = await waitUntil(
        async () => {
          await w.settle(b);
          return one({ eventType: "tunnel-rtt", deviceId, resolved: false });
        },
        (n) => n !== undefined,
        10_000,
        "tunnel-rtt raised against the tunnel's own thresholds",
      );
      expect(raised).toMatchObject({
        severity: "warning",
        details: `tunnel ${tunnel.num} to ${renamed}: round-trip time 50 ms (warning 40 ms, critical 80 ms)`,
      });
    } finally {
      b.setTunnelMetrics({ rtt: 20 });
      await w.settle(b);
      await w.settle(b);
      await w.api.call("PUT", "/api/tunnels/notifications", {
        body: { ids: [tunnel.id], notifications: { rtt: null, dropRate: null } },
      });
      await w.api.call("PUT", `/api/devices/${devices[0]!.id}`, { body: { name: farName } });
    }
    expect(await w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: false })).toEqual([]);
  });
});

describe("tunnel connection", () => {
  it("is raised once the end's reports confirm it down, and resolved when it is up again", async () => {
    const b = fleet.device(1);
    const deviceId = devices[1]!.id;
    b.setTunnelMetrics({ up: false }, tunnel.id);
    await w.settle(b);
    expect(await w.notifications({ eventType: "tunnel-connection", deviceId })).toEqual([]);
    await w.settle(b);
    const n = await one({ eventType: "tunnel-connection", deviceId, resolved: false });
    expect(n).toMatchObject({
      severity: "critical",
      count: 1,
      targets: { tunnelId: tunnel.id },
      details: `tunnel ${tunnel.num} to ${devices[0]!.name} is down, as reported by ${devices[1]!.name}`,
    });
    // The RTT of a tunnel that is down says nothing: no RTT alert.
    expect(await w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: false })).toEqual([]);
    b.setTunnelMetrics({ up: true, rtt: 20 }, tunnel.id);
    await w.settle(b);
    await w.settle(b);
    expect(await one({ eventType: "tunnel-connection", deviceId })).toMatchObject({ id: n!.id, resolved: true });
  });
});

describe("a raise or resolve the database refused", () => {
  it("is written at a later status, from what the database then holds", async () => {
    const a = fleet.device(0);
    const deviceId = devices[0]!.id;
    const db = w.g.database.db;
    // A refusal by the database itself (as a lost connection or a full disk would fail the engine's write), switched by a row.
    await sql`create table test_refuse_notifications (refuse boolean)`.execute(db);
    await sql`create function test_refuse_notifications() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from test_refuse_notifications) then raise exception 'refused by the test'; end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger test_refuse_notifications before insert or update on notifications
      for each row execute function test_refuse_notifications()`.execute(db);
    const refuse = async (on: boolean) => {
      await sql`delete from test_refuse_notifications`.execute(db);
      if (on) await sql`insert into test_refuse_notifications values (true)`.execute(db);
    };
    const open = () => w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: false });
    try {
      await refuse(true);
      a.setTunnelMetrics({ rtt: 350 });
      await w.settle(a);
      expect(await open()).toEqual([]);
      await refuse(false);
      // The raise that failed is not taken for done: the next status still over the threshold raises it.
      await w.settle(a);
      const [raised] = await open();
      expect(raised).toMatchObject({ severity: "warning", count: 1 });

      await refuse(true);
      a.setTunnelMetrics({ rtt: 20 });
      await w.settle(a);
      await w.settle(a);
      expect((await open()).map((n) => n.id)).toEqual([raised!.id]);
      await refuse(false);
      // Nor the resolve that failed: the device's open notification is read again, and good statuses resolve it.
      await w.settle(a);
      await w.settle(a);
      expect(await open()).toEqual([]);
      const resolved = await w.notifications({ eventType: "tunnel-rtt", deviceId, resolved: true });
      expect(resolved.map((n) => n.id)).toContain(raised!.id);
    } finally {
      await sql`drop trigger if exists test_refuse_notifications on notifications`.execute(db);
      await sql`drop function if exists test_refuse_notifications()`.execute(db);
      await sql`drop table if exists test_refuse_notifications`.execute(db);
      a.setTunnelMetrics({ rtt: 20 });
      await w.settle(a);
    }
  });
});

describe("job failed and failed self-healing", () => {
  it("a failed job raises; failed re-syncs count on it and end in failed self-healing; the next completed job resolves both", async () => {
    const a = fleet.device(0);
    const deviceId = devices[0]!.id;
    a.setApplyBehaviour({ failDriver: "bgp" });
    const jobs = await w.g.change(deviceId);
    await w.g.waitForJobs(jobs, "failed");
    const healing = await waitUntil(
      () => w.notifications({ eventType: "failed-self-healing", deviceId, resolved: false }),
      (l) => l.length === 1,
      15_000,
      "failed self-healing",
    );
    expect(healing[0]).toMatchObject({ severity: "critical", details: expect.stringContaining("2 automatic re-syncs") });
    await w.idle();
    const failed = await one({ eventType: "job-failed", deviceId, resolved: false });
    // The change and two automatic syncs failed: one notification seen three times.
    expect(failed).toMatchObject({ severity: "warning", count: 3 });
    expect(failed!.details).toContain("bgp: simulated failure");

    a.setApplyBehaviour(null);
    await w.g.waitForJobs(await w.g.change(deviceId), "complete");
    await waitUntil(
      () => w.notifications({ deviceId, resolved: false }),
      (l) => !l.some((n) => n.eventType === "job-failed" || n.eventType === "failed-self-healing"),
      10_000,
      "both resolved",
    );
  });
});

describe("device connection", () => {
  it("a disconnection shorter than the grace period raises nothing", async () => {
    const b = fleet.device(1);
    await b.disconnect();
    await b.connect();
    await new Promise((r) => setTimeout(r, 1800));
    expect(await w.notifications({ eventType: "device-connection", deviceId: devices[1]!.id })).toEqual([]);
  });

  it("is raised by the periodic duty after the grace period, once, and resolved when the device says hello again", async () => {
    const b = fleet.device(1);
    const deviceId = devices[1]!.id;
    const mails = w.smtp.received.length;
    await b.disconnect();
    const raised = await waitUntil(
      () => w.notifications({ eventType: "device-connection", deviceId }),
      (l) => l.length === 1,
      10_000,
      "device connection raised",
    );
    expect(raised[0]).toMatchObject({ severity: "critical", count: 1, resolved: false });
    expect(raised[0]!.details).toMatch(/disconnected at .* and has not come back for 1 s/);
    // Later duty runs do not raise it again.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await one({ eventType: "device-connection", deviceId }))?.count).toBe(1);
    const devicesList = await w.api.call<{ id: string; isConnected: boolean; connection: string }[]>("GET", "/api/devices");
    expect(devicesList.body.find((d) => d.id === deviceId)).toMatchObject({ isConnected: false, connection: "disconnected" });

    await b.connect();
    await waitUntil(
      () => one({ eventType: "device-connection", deviceId }),
      (n) => n?.resolved === true,
      10_000,
      "device connection resolved",
    );
    await w.idle();
    const subjects = w.smtp.received.slice(mails).map((m) => m.mail.subject);
    expect(subjects).toEqual([
      `[Tern] CRITICAL: Device connection on ${devices[1]!.name}`,
      `[Tern] Resolved: Device connection on ${devices[1]!.name}`,
    ]);
  });
});

describe("a connection notification whose resolve at hello was lost", () => {
  it("is resolved by the periodic duty while its device is connected", async () => {
    const device = devices[0]!;
    const org = (
      await w.g.database.db.selectFrom("devices").select("organization_id").where("id", "=", device.id).executeTakeFirstOrThrow()
    ).organization_id;
    // As the duty would have raised it, with the device back and the hello's resolve never written.
    await w.g.database.db
      .insertInto("notifications")
      .values({
        id: randomUUID(),
        organization_id: org,
        device_id: device.id,
        event_type: "device-connection",
        title: "Device connection",
        details: "lost resolve",
        severity: "critical",
        targets: JSON.stringify({ deviceId: device.id, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: notificationDedupKey({ eventType: "device-connection", targets: { deviceId: device.id } }),
      } as never)
      .execute();
    const resolved = await waitUntil(
      () => one({ eventType: "device-connection", deviceId: device.id }),
      (n) => n?.resolved === true,
      10_000,
      "the lost resolve made up by the duty",
    );
    expect(resolved).toMatchObject({ details: "lost resolve", resolved: true });
  });
});

describe("metrics", () => {
  it("counts notifications raised and delivery failures", async () => {
    const res = await fetch(`${w.g.server.url}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/tern_notifications_raised_total\{event="tunnel-rtt",severity="critical"\} [1-9]/);
    expect(text).toMatch(/tern_notifications_raised_total\{event="device-connection",severity="critical"\} 1/);
  });
});

describe("a far end that is disconnected", () => {
  it("shows its tunnel N/A and raises one device connection, no tunnel-down from the other end; fresh reports bring the tunnel back", async () => {
    const [a, b] = [fleet.device(0), fleet.device(1)];
    const [aId, bId] = [devices[0]!.id, devices[1]!.id];
    const before = (await w.notifications({ eventType: "tunnel-connection", deviceId: aId })).length;
    await b.disconnect();
    // The other end sees the tunnel down (its probes no longer come back) and says so, again and again.
    a.setTunnelMetrics({ up: false }, tunnel.id);
    for (let i = 0; i < 4; i++) await w.settle(a);
    const raised = await waitUntil(
      () => w.notifications({ eventType: "device-connection", deviceId: bId, resolved: false }),
      (l) => l.length === 1,
      10_000,
      "device connection raised",
    );
    expect(raised[0]).toMatchObject({ count: 1, severity: "critical" });
    for (let i = 0; i < 2; i++) await w.settle(a);
    await w.idle();
    expect((await w.notifications({ eventType: "tunnel-connection", deviceId: aId })).length).toBe(before);
    expect(await w.notifications({ eventType: "tunnel-drop-rate", deviceId: aId, resolved: false })).toEqual([]);
    const na = (await w.api.call<Tunnel>("GET", `/api/tunnels/${tunnel.id}`)).body;
    expect(na).toMatchObject({ status: "N/A", tunnelStatusB: "unknown" });

    await b.connect();
    await waitUntil(
      () => w.notifications({ eventType: "device-connection", deviceId: bId, resolved: false }),
      (l) => l.length === 0,
      10_000,
      "device connection resolved",
    );
    // Back, but not reported yet: its end says nothing about now.
    const fresh = (await w.api.call<Tunnel>("GET", `/api/tunnels/${tunnel.id}`)).body;
    expect(fresh.tunnelStatusB).toBe("unknown");
    a.setTunnelMetrics({ up: true, rtt: 20, loss: 0, jitter: 1 }, tunnel.id);
    b.setTunnelMetrics({ up: true, rtt: 20, loss: 0, jitter: 1 }, tunnel.id);
    await w.settle(a);
    await w.settle(b);
    const back = await waitUntil(
      async () => (await w.api.call<Tunnel>("GET", `/api/tunnels/${tunnel.id}`)).body,
      (t) => t.status === "Connected",
      10_000,
      "tunnel connected from fresh reports",
    );
    expect(back).toMatchObject({ tunnelStatusA: "up", tunnelStatusB: "up" });
    expect((await w.notifications({ eventType: "tunnel-connection", deviceId: aId })).length).toBe(before);
  });

  it("while the far end is connected, the same reports do raise tunnel connection (the hold is about the far end only)", async () => {
    const a = fleet.device(0);
    const aId = devices[0]!.id;
    a.setTunnelMetrics({ up: false }, tunnel.id);
    for (let i = 0; i < 3; i++) await w.settle(a);
    expect(await one({ eventType: "tunnel-connection", deviceId: aId, resolved: false })).toMatchObject({
      targets: { tunnelId: tunnel.id },
    });
    a.setTunnelMetrics({ up: true, rtt: 20, loss: 0, jitter: 1 }, tunnel.id);
    for (let i = 0; i < 2; i++) await w.settle(a);
    expect(await w.notifications({ eventType: "tunnel-connection", deviceId: aId, resolved: false })).toEqual([]);
  });
});
