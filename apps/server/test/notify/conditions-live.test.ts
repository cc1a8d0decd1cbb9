/**
 * Conditions a simulated device does not produce by itself, sent over a bare
 * device link (BGP neighbors that are not Established, interfaces without an
 * address), VRRP state changes from the simulator, and deliveries that fail
 * or hang: retried with back-off, logged, counted, and never in the way of
 * status ingestion.
 */
import { randomUUID } from "node:crypto";
import type { InterfaceState, Status, VrrpGroupStatus } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { type SimRow, waitUntil } from "../support/gateway.ts";
import { helloFor, openRawLink, type RawLink } from "../support/raw-link.ts";
import { createNotifyWorld, type NotifyWorld } from "./support.ts";

let w: NotifyWorld;
let device: SimRow;
let link: RawLink;

const NEIGHBOR = "10.100.0.3";

function iface(devId: string, name: string, IPv4: string): InterfaceState {
  return {
    devId,
    name,
    operState: "up",
    IPv4,
    IPv4Mask: IPv4 ? 24 : null,
    gateway: "",
    mac: "02:00:00:00:00:01",
    mtu: 1500,
    rxBytes: 0,
    txBytes: 0,
    publicIp: "",
    publicPort: null,
    lte: null,
  };
}

function status(fields: { neighbor?: string; lanIp?: string }): Status {
  return {
    type: "status",
    at: new Date().toISOString(),
    appliedHash: null,
    applying: false,
    tunnels: [],
    interfaces: [iface("pci:0000:00:03.0", "eth0", "100.64.0.2"), iface("pci:0000:00:04.0", "eth1", fields.lanIp ?? "10.0.0.1")],
    bgp: {
      running: true,
      routerId: "10.0.0.1",
      localASN: 65001,
      neighbors: [
        {
          ip: NEIGHBOR,
          remoteASN: 65002,
          state: (fields.neighbor ?? "Established") as "Established",
          uptimeSeconds: 0,
          prefixesReceived: 0,
          prefixesSent: 0,
        },
      ],
    },
    vrrp: [],
    health: { uptimeSeconds: 1, cpuPercent: 1, memoryPercent: 10, diskPercent: 10, temperatureC: null },
  };
}

const send = (fields: Parameters<typeof status>[0]) => w.settleWith(device.id, () => link.send(status(fields)));

beforeAll(async () => {
  w = await createNotifyWorld();
  const rules = await w.api.call("PUT", "/api/notificationsConf", {
    body: { rules: { "bgp-neighbor-down": { severity: "critical", sendWebHook: true } } },
  });
  expect(rules.status).toBe(200);
  device = (await w.g.fleet(1, { connect: false, queueConfig: false })).devices[0]!;
  await w.g.database.db
    .updateTable("devices")
    .set({
      bgp: toJson({
        enable: true,
        routerId: "",
        localASN: 65001,
        keepaliveInterval: 30,
        holdInterval: 90,
        redistributeLan: true,
        neighbors: [{ ip: NEIGHBOR, remoteASN: 65002, multiHop: 1, password: "", sendCommunity: false }],
      }),
    })
    .where("id", "=", device!.id)
    .execute();
  link = await openRawLink(w.g.server.url, device!.token, device!);
  link.send(helloFor(device!.machineId));
  await link.next("welcome");
});

afterAll(async () => {
  link?.ws.close();
  await w?.close();
});

describe("BGP neighbor down", () => {
  it("is raised once confirmed, posted by webhook, and resolved when the session is Established again", async () => {
    await send({ neighbor: "Established" });
    await send({ neighbor: "Active" });
    expect(await w.notifications({ eventType: "bgp-neighbor-down" })).toEqual([]);
    const hooks = w.webhook.received.length;
    await send({ neighbor: "Active" });
    const [n] = await w.notifications({ eventType: "bgp-neighbor-down", resolved: false });
    expect(n).toMatchObject({
      severity: "critical",
      deviceId: device.id,
      targets: { deviceId: device.id, bgpNeighbor: NEIGHBOR, tunnelId: null },
      details: `BGP neighbor ${NEIGHBOR} (AS 65002) of ${(await w.g.database.db.selectFrom("devices").select("name").where("id", "=", device.id).executeTakeFirstOrThrow()).name} is Active`,
    });
    // Filterable by neighbor.
    expect((await w.notifications({ bgpNeighbor: NEIGHBOR } as never)).map((x) => x.id)).toEqual([n!.id]);
    await waitUntil(
      () => w.webhook.received.length,
      (k) => k > hooks,
    );
    expect(JSON.parse(w.webhook.received[hooks]!.body)).toMatchObject({
      event: "notification.raised",
      notification: { id: n!.id },
    });

    await send({ neighbor: "Established" });
    await send({ neighbor: "Established" });
    expect((await w.notifications({ eventType: "bgp-neighbor-down" }))[0]).toMatchObject({ id: n!.id, resolved: true });
  });
});

describe("missing interface IP", () => {
  it("an assigned interface reported without an address is raised after confirmation and resolved when it has one", async () => {
    const lan = (
      await w.g.database.db.selectFrom("devices").select("interfaces").where("id", "=", device.id).executeTakeFirstOrThrow()
    ).interfaces.find((i) => i.name === "eth1")!;
    await send({ lanIp: "" });
    await send({ lanIp: "" });
    const [n] = await w.notifications({ eventType: "missing-interface-ip", resolved: false });
    expect(n).toMatchObject({
      severity: "warning",
      targets: { interfaceId: lan.id },
      details: expect.stringContaining("eth1 (LAN)"),
    });
    await send({ lanIp: "10.0.0.1" });
    await send({ lanIp: "10.0.0.1" });
    expect((await w.notifications({ eventType: "missing-interface-ip" }))[0]?.resolved).toBe(true);
  });
});

describe("deliveries that fail", () => {
  it("are retried with back-off, logged attempt by attempt, counted as failed, and hold nothing up", async () => {
    w.webhook.script(500, 500, 500);
    const before = await w.g.database.db.selectFrom("notification_deliveries").select("id").execute();
    await send({ neighbor: "Idle" });
    await send({ neighbor: "Idle" });
    const [n] = await w.notifications({ eventType: "bgp-neighbor-down", resolved: false });
    expect(n).toBeDefined();
    const attempts = await waitUntil(
      () =>
        w.g.database.db
          .selectFrom("notification_deliveries")
          .selectAll()
          .where("notification_id", "=", n!.id)
          .where("channel", "=", "webhook")
          .orderBy("id")
          .execute(),
      (rows) => rows.some((r) => r.status === "failed"),
      10_000,
      "the failed delivery",
    );
    expect(attempts.map((r) => [r.attempt, r.status, r.response_code])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 500],
      [3, "failed", 500],
    ]);
    expect(new Set(attempts.map((r) => r.delivery_id)).size).toBe(1);
    expect(before.length).toBeGreaterThan(0);
    const metrics = await (await fetch(`${w.g.server.url}/metrics`)).text();
    expect(metrics).toMatch(/tern_notification_delivery_failures_total\{channel="webhook"\} 1\b/);
  });

  it("a receiver that hangs does not slow status ingestion or other notifications", async () => {
    let release!: () => void;
    const hung = new Promise<void>((r) => {
      release = r;
    });
    w.webhook.script({ waitFor: hung });
    const [open] = await w.notifications({ eventType: "bgp-neighbor-down", resolved: false });
    // Resolves the open BGP notification: its "resolved" webhook hangs.
    await send({ neighbor: "Established" });
    await send({ neighbor: "Established" });
    await waitUntil(
      () => w.webhook.received.length,
      () => true,
    );
    // Meanwhile statuses keep being taken in and judged: the LAN address goes missing and is raised.
    const received = async () =>
      (
        await w.g.database.db
          .selectFrom("device_state")
          .select("received_at")
          .where("device_id", "=", device.id)
          .executeTakeFirst()
      )?.received_at;
    const t0 = await received();
    await send({ lanIp: "" });
    await send({ lanIp: "" });
    expect(await w.notifications({ eventType: "missing-interface-ip", resolved: false })).toHaveLength(1);
    await waitUntil(received, (t) => !!t && !!t0 && t > t0);
    // All of that while the delivery still hangs.
    const hanging = w.webhook.received.length;
    expect(
      await w.g.database.db
        .selectFrom("notification_deliveries")
        .select("id")
        .where("notification_id", "=", open!.id)
        .where("event", "=", "notification.resolved")
        .where("channel", "=", "webhook")
        .execute(),
    ).toEqual([]);
    release();
    await w.idle();
    expect(w.webhook.received.length).toBe(hanging);
    await send({ lanIp: "10.0.0.1" });
    await send({ lanIp: "10.0.0.1" });
  });
});

describe("VRRP state change", () => {
  it("status ingestion records members' states (GET /vrrp/status) and a change between known states is raised", async () => {
    const { fleet, devices } = await w.g.fleet(1, { statusIntervalMs: 3_600_000 });
    const sim = fleet.device(0);
    const member = devices[0]!;
    const groupId = randomUUID();
    await w.g.database.db
      .insertInto("vrrp_groups")
      .values({
        id: groupId,
        organization_id: w.g.org.id,
        name: "office gateway",
        virtual_router_id: 51,
        virtual_ip: "10.0.1.254",
        preemption: true,
        accept_mode: false,
        advert_interval_ms: 1000,
      })
      .execute();
    await w.g.database.db
      .insertInto("vrrp_members")
      .values({
        group_id: groupId,
        device_id: member.id,
        position: 0,
        interface: "pci:0000:00:04.0",
        priority: 150,
        track_optional: toJson([]),
        track_mandatory: toJson([]),
      })
      .execute();
    const stateOf = async () => {
      const res = await w.api.call<VrrpGroupStatus[]>("GET", "/api/vrrp/status");
      return res.body.find((g) => g.id === groupId)?.devices[0];
    };
    expect(await stateOf()).toMatchObject({ state: "unknown", isConnected: true });

    sim.setVrrpState(groupId, "MASTER");
    await w.settle(sim);
    await waitUntil(stateOf, (m) => m?.state === "MASTER");
    // From unknown to a first state is no change worth a notification.
    await w.idle();
    expect(await w.notifications({ eventType: "vrrp-state-change" })).toEqual([]);

    sim.setVrrpState(groupId, "BACKUP");
    await w.settle(sim);
    await waitUntil(stateOf, (m) => m?.state === "BACKUP");
    const [n] = await waitUntil(
      () => w.notifications({ eventType: "vrrp-state-change" }),
      (l) => l.length === 1,
    );
    expect(n).toMatchObject({
      severity: "warning",
      deviceId: member.id,
      targets: { vrrpGroupId: groupId },
      details: expect.stringContaining("VRRP group office gateway"),
    });
    expect(n!.details).toMatch(/MASTER → BACKUP$/);

    sim.setVrrpState(groupId, "FAULT");
    await w.settle(sim);
    await waitUntil(
      () => w.notifications({ eventType: "vrrp-state-change" }),
      (l) => l[0]?.severity === "critical",
    );
    expect((await w.notifications({ eventType: "vrrp-state-change" }))[0]).toMatchObject({ id: n!.id, count: 2 });
  });
});
