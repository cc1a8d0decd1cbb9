/**
 * `GET /devices/{id}/interfaces/{interfaceId}/status` and `/bgp/status` on the
 * real server: what the device last reported (`source: reported`), or with
 * `live=true` asked over its link (`source: live`); a device that is not
 * connected is 409 DEVICE_NOT_CONNECTED, one that does not answer 504
 * DEVICE_TIMEOUT, one that refuses 409 with its reason. Devices list their
 * connection as the gateway sees it.
 */
import type { BgpStatusResponse, Device, InterfaceStatusResponse } from "@tern/protocol";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { beforeAll, describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";
import type { AdminClient } from "../support/onboarding.ts";

const g = useGatewayServer({ TERN_DEVICE_READ_TIMEOUT_MS: "800" });
let api: AdminClient;
let fleet: Simulator;
let device: SimRow;

beforeAll(async () => {
  api = await g.api();
  let devices: SimRow[];
  ({ fleet, devices } = await g.fleet(1, { statusIntervalMs: 3_600_000 }));
  device = devices[0]!;
  await waitUntil(
    () => fleet.stats().applied,
    (n) => n === 1,
  );
});

const ifacePath = () => `/api/devices/${device.id}/interfaces/${device.wanId}/status`;

describe("device status reads", () => {
  it("say unknown until the device reports, then give the last report with its time", async () => {
    const before = await api.call<InterfaceStatusResponse>("GET", ifacePath());
    expect(before.body).toMatchObject({ source: "unknown", state: "unknown", reportedAt: null });
    const sent = Date.now();
    fleet.device(0).sendStatus();
    const after = await waitUntil(
      async () => (await api.call<InterfaceStatusResponse>("GET", ifacePath())).body,
      (r) => r.source === "reported",
    );
    expect(after.state).toMatchObject({ devId: "pci:0000:00:03.0", name: "eth0", operState: "up", IPv4: "100.64.0.2" });
    expect(new Date(after.reportedAt!).getTime()).toBeGreaterThanOrEqual(sent - 1000);
    // The simulator runs no BGP: it reports none, so the BGP read is still unknown.
    const bgp = await api.call<BgpStatusResponse>("GET", `/api/devices/${device.id}/bgp/status`);
    expect(bgp.body).toMatchObject({ source: "unknown", state: "unknown" });
  });

  it("with live=true ask the connected device", async () => {
    const live = await api.call<InterfaceStatusResponse>("GET", ifacePath(), { query: { live: true } });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ source: "live", state: { devId: "pci:0000:00:03.0", operState: "up" } });
    const bgp = await api.call<BgpStatusResponse>("GET", `/api/devices/${device.id}/bgp/status`, { query: { live: true } });
    expect(bgp.body).toMatchObject({ source: "live", state: { running: false, neighbors: [] } });
  });

  it("a device that refuses the read answers 409 with its reason", async () => {
    const row = await g.database.db
      .selectFrom("devices")
      .select("interfaces")
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    const extra = { ...row.interfaces[1]!, id: crypto.randomUUID(), devId: "usb:9-9", name: "wwan9", isAssigned: false };
    await g.database.db
      .updateTable("devices")
      .set({ interfaces: toJson([...row.interfaces, extra]) })
      .where("id", "=", device.id)
      .execute();
    const res = await api.call<{ code: string; error: string }>(
      "GET",
      `/api/devices/${device.id}/interfaces/${extra.id}/status`,
      { query: { live: true } },
    );
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("CONFLICT");
    expect(res.body.error).toContain("no interface with devId usb:9-9");
    // Its last report has nothing about that interface: unknown.
    const reported = await api.call<InterfaceStatusResponse>("GET", `/api/devices/${device.id}/interfaces/${extra.id}/status`);
    expect(reported.body.source).toBe("unknown");
  });

  it("a device that does not answer in time is 504 DEVICE_TIMEOUT", async () => {
    const sim = fleet.device(0);
    sim.freeze();
    try {
      const res = await api.call<{ code: string }>("GET", ifacePath(), { query: { live: true } });
      expect(res.status).toBe(504);
      expect(res.body.code).toBe("DEVICE_TIMEOUT");
    } finally {
      sim.unfreeze();
    }
  });

  it("a device that is not connected is 409 DEVICE_NOT_CONNECTED live, and keeps its last report; the list says disconnected", async () => {
    await fleet.device(0).disconnect();
    await waitUntil(
      async () => (await api.call<Device[]>("GET", "/api/devices")).body.find((d) => d.id === device.id),
      (d) => d?.connection === "disconnected" && d.isConnected === false,
    );
    const res = await api.call<{ code: string }>("GET", ifacePath(), { query: { live: true } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("DEVICE_NOT_CONNECTED");
    const last = await api.call<InterfaceStatusResponse>("GET", ifacePath());
    expect(last.body.source).toBe("reported");
    await fleet.device(0).connect();
    const back = await api.call<Device[]>("GET", "/api/devices", { query: { response: "summary" } });
    expect(back.body.find((d) => d.id === device.id)).toMatchObject({ isConnected: true });
  });
});
