/** GET /api/devices/{id}/tunnels, /interfaces/{interfaceId}/status and /bgp/status. */
import { randomUUID } from "node:crypto";
import {
  type BgpStatusResponse,
  type InterfaceState,
  InterfaceStatusResponse,
  type Tunnel,
  Tunnel as TunnelSchema,
} from "@tern/protocol";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { insertTestTunnel, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import type { DeviceStatusReader } from "../../services/devices/status.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("GET /api/devices/{id}/tunnels", () => {
  const t = useTestServer();

  /** The tunnel is in both ends' desired configs, as the compiler would have put it. */
  const configured = (deviceIds: string[], tunnelIds: string[]) =>
    t.database.db
      .updateTable("devices")
      .set({ desired_tunnel_ids: sql`${`{${tunnelIds.join(",")}}`}::uuid[]` })
      .where("id", "in", deviceIds)
      .execute();
  const report = (tunnelId: string, side: "a" | "b", deviceId: string, up: boolean, rtt = 20) =>
    t.database.db
      .insertInto("tunnel_latest")
      .values({ tunnel_id: tunnelId, side, device_id: deviceId, at: new Date(), up, loss: 0.5, rtt, jitter: 1.25, samples: 10 })
      .execute();

  it("is the tunnels list scoped to the device: same shape, live status and quality from both ends' reports", async () => {
    const a = await insertValidDevice(t, { name: "hub" });
    const b = await insertValidDevice(t, { name: "spoke-1" });
    const c = await insertValidDevice(t, { name: "spoke-2" });
    const d = await insertValidDevice(t, { name: "elsewhere" });
    const ab = await insertTestTunnel(t, a, b, { num: 0 });
    const ca = await insertTestTunnel(t, c, a, { num: 128 });
    const bd = await insertTestTunnel(t, b, d, { num: 5 });
    await configured([a.id, b.id, c.id, d.id], [ab.id, ca.id, bd.id]);
    await t.database.db
      .updateTable("devices")
      .set({ connection: "connected", last_connected_at: new Date(Date.now() - 60_000) })
      .where("id", "in", [a.id, c.id])
      .execute();
    await t.database.db.updateTable("devices").set({ connection: "disconnected" }).where("id", "=", b.id).execute();
    await report(ca.id, "a", c.id, true, 31.4);
    await report(ca.id, "b", a.id, true);

    const res = await t.api<Tunnel[]>("GET", `/api/devices/${a.id}/tunnels`, { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("2");
    for (const tunnel of res.body) expect(TunnelSchema.safeParse(tunnel).success).toBe(true);
    expect(res.body.map((x) => x.id)).toEqual([ab.id, ca.id]);
    expect(res.body[0]).toMatchObject({
      num: 0,
      deviceA: { id: a.id, name: "hub", hostname: "hub" },
      interfaceA: { id: a.wan.id, name: "wan0", IPv4: a.wan.IPv4 },
      deviceB: { id: b.id, name: "spoke-1" },
      interfaceB: { id: b.wan.id, name: "wan0", IPv4: b.wan.IPv4 },
      peer: null,
      // Tunnel 0 in 10.100.0.0/16: h = 2, l = 0.
      loopbackA: "10.100.0.2",
      loopbackB: "10.100.0.3",
      // spoke-1 is not connected: not pending (it has its config), N/A.
      status: "N/A",
      tunnelStatus: "Not Connected",
      isPending: false,
      tunnelStatusA: "unknown",
      tunnelStatusB: "unknown",
      quality: { a: null, b: null },
    });
    // Both ends connected and reporting the tunnel up. Tunnel 128: l = 1, h = 4.
    expect(res.body[1]).toMatchObject({
      num: 128,
      deviceA: { id: c.id },
      loopbackA: "10.100.1.4",
      loopbackB: "10.100.1.5",
      status: "Connected",
      tunnelStatus: "Connected",
      tunnelStatusA: "up",
      tunnelStatusB: "up",
      isPending: false,
      pendingReason: "",
      quality: { a: { loss: 0.5, rtt: 31.4, jitter: 1.25, up: true }, b: { rtt: 20 } },
    });
    // The same tunnel read through GET /tunnels agrees.
    const same = await t.api<Tunnel>("GET", `/api/tunnels/${ca.id}`, { token: t.admin.token });
    expect(same.body).toEqual(res.body[1]);

    const filtered = await t.api<Tunnel[]>("GET", `/api/devices/${a.id}/tunnels`, {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "device.name", op: "==", val: "spoke-2" }]) },
    });
    expect(filtered.body.map((x) => x.id)).toEqual([ca.id]);
    const connected = await t.api<Tunnel[]>("GET", `/api/devices/${a.id}/tunnels`, {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "status", op: "==", val: "Connected" }]) },
    });
    expect(connected.body.map((x) => x.id)).toEqual([ca.id]);
    const sorted = await t.api<Tunnel[]>("GET", `/api/devices/${a.id}/tunnels`, {
      token: t.admin.token,
      query: { sort: "num", order: "desc", limit: 1, response: "summary" },
    });
    expect(sorted.body).toEqual([expect.objectContaining({ num: 128, status: "Connected" })]);
    expect(Object.keys(sorted.body[0]!)).not.toContain("quality");
    expect(sorted.headers.get("records-total")).toBe("2");
    const never = await t.api<Tunnel[]>("GET", `/api/devices/${d.id}/tunnels`, { token: t.admin.token });
    expect(never.body[0]?.pendingReason).toBe("waiting for device elsewhere to connect");
  });

  it("a report from before the device's last connect says nothing about now: unknown", async () => {
    const a = await insertValidDevice(t, { name: "old-a" });
    const b = await insertValidDevice(t, { name: "old-b" });
    const ab = await insertTestTunnel(t, a, b);
    await configured([a.id, b.id], [ab.id]);
    await report(ab.id, "a", a.id, true);
    await report(ab.id, "b", b.id, true);
    await t.database.db
      .updateTable("devices")
      .set({ connection: "connected", last_connected_at: new Date(Date.now() + 60_000) })
      .where("id", "in", [a.id, b.id])
      .execute();
    const res = await t.api<Tunnel[]>("GET", `/api/devices/${a.id}/tunnels`, { token: t.admin.token });
    expect(res.body[0]).toMatchObject({ status: "Not Connected", tunnelStatusA: "unknown", tunnelStatusB: "unknown" });
    // The last figures are still shown, with their time.
    expect(res.body[0]?.quality.a).toMatchObject({ up: true, rtt: 20 });
  });

  it("a device without tunnels has an empty list; an unknown device is 404", async () => {
    const lonely = await insertValidDevice(t);
    const res = await t.api<Tunnel[]>("GET", `/api/devices/${lonely.id}/tunnels`, { token: t.admin.token });
    expect(res.body).toEqual([]);
    expect(res.headers.get("records-total")).toBe("0");
    expect((await t.api("GET", `/api/devices/${randomUUID()}/tunnels`, { token: t.admin.token })).status).toBe(404);
  });
});

const lteState: InterfaceState = {
  devId: "usb:1-1",
  name: "wwan0",
  operState: "up",
  IPv4: "100.64.1.2",
  IPv4Mask: 30,
  gateway: "100.64.1.1",
  mac: "02:00:00:00:0c:01",
  mtu: 1500,
  rxBytes: 1000,
  txBytes: 2000,
  publicIp: "198.51.100.7",
  publicPort: null,
  lte: {
    connected: true,
    simStatus: "ready",
    operator: "Lab Mobile",
    signal: { rssiDbm: -70, rsrpDbm: -95, rsrqDb: -10, sinrDb: 12 },
    accessTechnology: "lte",
  },
};

describe("device status reads", () => {
  const t = useTestServer();
  afterEach(() => {
    t.deps.deviceStatus = undefined;
  });

  it("before the device reports, the interface status says so explicitly: source and state unknown", async () => {
    const device = await insertValidDevice(t);
    const res = await t.api<InterfaceStatusResponse>("GET", `/api/devices/${device.id}/interfaces/${device.wan.id}/status`, {
      token: t.admin.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      deviceId: device.id,
      interfaceId: device.wan.id,
      source: "unknown",
      state: "unknown",
      reportedAt: null,
    });
  });

  it("an unknown interface or device is 404; ids must be UUIDs", async () => {
    const device = await insertValidDevice(t);
    const unknownIface = await t.api<ErrorBody>("GET", `/api/devices/${device.id}/interfaces/${randomUUID()}/status`, {
      token: t.admin.token,
    });
    expect(unknownIface.status).toBe(404);
    expect(unknownIface.body.code).toBe("NOT_FOUND");
    // The devId is not the interface id.
    const byDevId = await t.api<ErrorBody>("GET", `/api/devices/${device.id}/interfaces/${device.wan.devId}/status`, {
      token: t.admin.token,
    });
    expect(byDevId.status).toBe(400);
    expect(byDevId.body.details[0]?.path).toBe("interfaceId");
    expect(
      (await t.api("GET", `/api/devices/${randomUUID()}/interfaces/${device.wan.id}/status`, { token: t.admin.token })).status,
    ).toBe(404);
  });

  it("is filterable by organization: the device is found in the organization named by org", async () => {
    const other = await t.api<{ id: string }>("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name: "Status org" },
    });
    const device = await insertValidDevice(t, { orgId: other.body.id });
    const path = `/api/devices/${device.id}/interfaces/${device.lan.id}/status`;
    expect((await t.api("GET", path, { token: t.admin.token })).status).toBe(404);
    const res = await t.api<InterfaceStatusResponse>("GET", path, { token: t.admin.token, query: { org: other.body.id } });
    expect(res.status).toBe(200);
    expect(res.body.interfaceId).toBe(device.lan.id);
    const bgp = await t.api<BgpStatusResponse>("GET", `/api/devices/${device.id}/bgp/status`, {
      token: t.admin.token,
      query: { org: other.body.id },
    });
    expect(bgp.body).toEqual({ deviceId: device.id, source: "unknown", state: "unknown", reportedAt: null });
  });

  it("a status reader installed by the gateway supplies the reported state, with its time", async () => {
    const device = await insertValidDevice(t);
    const reportedAt = new Date("2026-11-21T12:00:00.000Z");
    const asked: { device: string; iface: string; connection: string }[] = [];
    const reader: DeviceStatusReader = {
      async interfaceState(_ctx, d, iface) {
        asked.push({ device: d.id, iface: iface.devId, connection: d.connection });
        return { source: "reported", state: { ...lteState, devId: iface.devId, name: iface.name }, reportedAt };
      },
      async bgpState() {
        return {
          source: "reported",
          state: {
            running: true,
            routerId: "10.255.0.1",
            localASN: 65001,
            neighbors: [
              {
                ip: "10.100.0.3",
                remoteASN: 65002,
                state: "Established",
                uptimeSeconds: 60,
                prefixesReceived: 3,
                prefixesSent: 2,
              },
            ],
          },
          reportedAt,
        };
      },
    };
    t.deps.deviceStatus = reader;
    const res = await t.api<InterfaceStatusResponse>("GET", `/api/devices/${device.id}/interfaces/${device.lan.id}/status`, {
      token: t.admin.token,
    });
    expect(res.status).toBe(200);
    expect(InterfaceStatusResponse.parse(res.body)).toMatchObject({ source: "reported", reportedAt: reportedAt.toISOString() });
    expect(res.body.state).toMatchObject({ devId: device.lan.devId, lte: { operator: "Lab Mobile" } });
    expect(asked).toEqual([{ device: device.id, iface: device.lan.devId, connection: "never" }]);
    const bgp = await t.api<BgpStatusResponse>("GET", `/api/devices/${device.id}/bgp/status`, { token: t.admin.token });
    expect(bgp.body).toMatchObject({ source: "reported", state: { running: true, neighbors: [{ state: "Established" }] } });
  });

  it("BGP status of a device that never reported is unknown, not an error; unknown device 404", async () => {
    const device = await insertValidDevice(t);
    await t.database.db
      .updateTable("devices")
      .set({
        bgp: toJson({
          enable: false,
          routerId: "",
          localASN: null,
          keepaliveInterval: 30,
          holdInterval: 90,
          redistributeLan: true,
          neighbors: [],
        }),
      })
      .where("id", "=", device.id)
      .execute();
    const res = await t.api<BgpStatusResponse>("GET", `/api/devices/${device.id}/bgp/status`, { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deviceId: device.id, source: "unknown", state: "unknown", reportedAt: null });
    expect((await t.api("GET", `/api/devices/${randomUUID()}/bgp/status`, { token: t.admin.token })).status).toBe(404);
  });
});
