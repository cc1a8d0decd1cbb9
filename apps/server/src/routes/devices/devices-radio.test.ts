/**
 * LTE and WiFi interface settings through PUT/GET /api/devices/{id}: validation with
 * machine codes, secrets (SIM PIN, APN password, WPA passphrase) write-only and
 * encrypted at rest, compiled into the device's config; and the LTE part of
 * GET /devices/{id}/interfaces/{interfaceId}/status.
 */
import { randomUUID } from "node:crypto";
import {
  type Device,
  DeviceConfig,
  type DeviceInterface,
  type InterfaceState,
  type InterfaceStatusResponse,
} from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { readDesiredConfig } from "../../services/desired-config-seal.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

describe("LTE and WiFi interfaces", () => {
  const t = useTestServer();
  const put = <T = Device>(id: string, body: unknown, token = t.admin.token) =>
    t.api<T>("PUT", `/api/devices/${id}`, { token, body });
  const get = async (id: string) => (await t.api<Device>("GET", `/api/devices/${id}`, { token: t.admin.token })).body;

  /** A device with wan0, lan0, a modem port wwan0 (lte) and a radio wlan0 (wifi), as the agent would have reported them. */
  async function radioDevice() {
    const device = await insertValidDevice(t);
    const base = { ...device.lan, pathlabels: [], PublicIP: "", PublicPort: "", isPublicAddressRateLimited: false };
    const wwan: DeviceInterface = {
      ...base,
      id: randomUUID(),
      devId: `usb:${device.id.slice(0, 8)}`,
      name: "wwan0",
      deviceType: "lte",
      type: "NONE",
      isAssigned: false,
      IPv4: "",
      IPv4Mask: null,
      gateway: "",
    };
    const wlan: DeviceInterface = {
      ...base,
      id: randomUUID(),
      devId: `mac:02:00:00:${device.id.slice(0, 2)}:0e:01`,
      name: "wlan0",
      deviceType: "wifi",
      type: "NONE",
      isAssigned: false,
      IPv4: "",
      IPv4Mask: null,
      gateway: "",
    };
    await t.database.db
      .updateTable("devices")
      .set({ interfaces: toJson([device.wan, device.lan, wwan, wlan]) })
      .where("id", "=", device.id)
      .execute();
    for (const i of [device.wan, device.lan, wwan, wlan]) names[i.devId] = i.name;
    return { ...device, wwan, wlan };
  }
  const names: Record<string, string> = {};
  const lteBody = (devId: string, lte: Record<string, unknown>) => ({
    interfaces: [{ devId, name: names[devId], isAssigned: true, type: "WAN", dhcp: true, lte }],
  });
  const wifiBody = (devId: string, wifi: Record<string, unknown>) => ({
    interfaces: [{ devId, name: names[devId], isAssigned: true, type: "LAN", IPv4: "192.168.77.1", IPv4Mask: 24, wifi }],
  });
  const storedInterfaces = async (id: string) =>
    JSON.stringify(
      (await t.database.db.selectFrom("devices").select("interfaces").where("id", "=", id).executeTakeFirstOrThrow()).interfaces,
    );

  it("stores LTE settings with the PIN and password encrypted, never returns them, and compiles them into the device's config", async () => {
    const d = await radioDevice();
    const res = await put(
      d.id,
      lteBody(d.wwan.devId, { apn: "internet.lab", auth: "chap", username: "tern", password: "apn-Secret-9", pin: "4321" }),
    );
    expect(res.status, res.text).toBe(202);
    const shown = (await get(d.id)).interfaces.find((i) => i.devId === d.wwan.devId);
    expect(shown?.lte).toEqual({ apn: "internet.lab", ipType: "ipv4", auth: "chap", username: "tern", allowRoaming: false });
    const raw = await storedInterfaces(d.id);
    expect(raw).not.toContain("apn-Secret-9");
    expect(raw).not.toContain('"4321"');
    expect(raw).toMatch(/"pinEnc":"v1\./);
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, d.id));
    expect(config.interfaces.find((i) => i.name === "wwan0")?.lte).toEqual({
      apn: "internet.lab",
      ipType: "ipv4",
      auth: "chap",
      username: "tern",
      password: "apn-Secret-9",
      pin: "4321",
      allowRoaming: false,
    });
    // The audit trail holds the device as the API shows it: no secrets.
    const audit = await t.database.db.selectFrom("audit_log").select("after").where("resource_id", "=", d.id).execute();
    expect(JSON.stringify(audit)).not.toContain("apn-Secret-9");

    // Sending the settings back without secrets keeps them; an empty PIN clears it.
    expect((await put(d.id, lteBody(d.wwan.devId, { apn: "iot.lab", auth: "chap", username: "tern" }))).status).toBe(202);
    let next = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, d.id));
    expect(next.interfaces.find((i) => i.name === "wwan0")?.lte).toMatchObject({
      apn: "iot.lab",
      password: "apn-Secret-9",
      pin: "4321",
    });
    expect((await put(d.id, lteBody(d.wwan.devId, { apn: "iot.lab", auth: "chap", username: "tern", pin: "" }))).status).toBe(
      202,
    );
    next = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, d.id));
    expect(next.interfaces.find((i) => i.name === "wwan0")?.lte).toMatchObject({ pin: "", password: "apn-Secret-9" });
  });

  it("refuses bad LTE settings with VALIDATION_FAILED at the field: APN, PIN format, credentials, unknown fields, wrong interface kind", async () => {
    const d = await radioDevice();
    const cases: [Record<string, unknown>, string][] = [
      [{ apn: "bad apn!" }, "interfaces.0.lte.apn"],
      [{ apn: "-internet" }, "interfaces.0.lte.apn"],
      [{ apn: "internet", pin: "12a4" }, "interfaces.0.lte.pin"],
      [{ apn: "internet", pin: "123" }, "interfaces.0.lte.pin"],
      [{ apn: "internet", pin: "123456789" }, "interfaces.0.lte.pin"],
      [{ apn: "internet", auth: "pap" }, "interfaces.0.lte.username"],
      [{ apn: "internet", auth: "pap", username: "a,b" }, "interfaces.0.lte.username"],
      [{ apn: "internet", auth: "kerberos", username: "x" }, "interfaces.0.lte.auth"],
      [{ apn: "internet", text: "hello" }, "interfaces.0.lte.text"],
    ];
    for (const [lte, path] of cases) {
      const res = await put<ErrorBody>(d.id, lteBody(d.wwan.devId, lte));
      expect(res.status, JSON.stringify(lte)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((x) => x.path)).toContain(path);
    }
    const onEthernet = await put<ErrorBody>(d.id, lteBody(d.lan.devId, { apn: "internet" }));
    expect(onEthernet.status).toBe(400);
    expect(onEthernet.body.code).toBe("VALIDATION_FAILED");
    expect(onEthernet.body.details.map((x) => x.path)).toContain("interfaces.0.lte");
    expect((await storedInterfaces(d.id)).includes('"lte":')).toBe(false);
  });

  it("stores a WiFi access point with its passphrase encrypted; a band change keeps the passphrase and reaches the config", async () => {
    const d = await radioDevice();
    const wifi = {
      ssid: "Tern Café",
      band: "2.4GHz",
      channel: 6,
      country: "DE",
      security: "wpa2-wpa3",
      passphrase: "correct horse battery",
    };
    expect((await put(d.id, wifiBody(d.wlan.devId, wifi))).status).toBe(202);
    const shown = (await get(d.id)).interfaces.find((i) => i.devId === d.wlan.devId);
    expect(shown?.wifi).toEqual({
      ssid: "Tern Café",
      band: "2.4GHz",
      channel: 6,
      country: "DE",
      security: "wpa2-wpa3",
      hidden: false,
    });
    expect(await storedInterfaces(d.id)).not.toContain("correct horse");

    const { passphrase: _, ...withoutSecret } = wifi;
    expect((await put(d.id, wifiBody(d.wlan.devId, { ...withoutSecret, band: "5GHz", channel: 36 }))).status).toBe(202);
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, d.id));
    expect(config.interfaces.find((i) => i.name === "wlan0")?.wifi).toEqual({
      ssid: "Tern Café",
      band: "5GHz",
      channel: 36,
      country: "DE",
      security: "wpa2-wpa3",
      passphrase: "correct horse battery",
      hidden: false,
    });
  });

  it("refuses bad WiFi settings with VALIDATION_FAILED at the field", async () => {
    const d = await radioDevice();
    const ok = { ssid: "lab", band: "5GHz", channel: 36, country: "DE", passphrase: "12345678" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, channel: 6 }, "interfaces.0.wifi.channel"],
      [{ ...ok, band: "2.4GHz", channel: 36 }, "interfaces.0.wifi.channel"],
      [{ ...ok, band: "6GHz" }, "interfaces.0.wifi.band"],
      [{ ...ok, country: "de" }, "interfaces.0.wifi.country"],
      [{ ...ok, passphrase: "short" }, "interfaces.0.wifi.passphrase"],
      [{ ...ok, ssid: "x".repeat(33) }, "interfaces.0.wifi.ssid"],
      [{ ...ok, security: "wep" }, "interfaces.0.wifi.security"],
      [{ ssid: "lab", band: "5GHz", channel: 36, country: "DE" }, "interfaces.0.wifi.passphrase"],
    ];
    for (const [wifi, path] of cases) {
      const res = await put<ErrorBody>(d.id, wifiBody(d.wlan.devId, wifi));
      expect(res.status, JSON.stringify(wifi)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((x) => x.path)).toContain(path);
    }
    const onLte = await put<ErrorBody>(d.id, wifiBody(d.wwan.devId, ok));
    expect(onLte.body.code).toBe("VALIDATION_FAILED");
    expect(onLte.body.details.map((x) => x.path)).toContain("interfaces.0.wifi");
  });

  it("a viewer cannot change radio settings; another organization cannot see or change them", async () => {
    const d = await radioDevice();
    const viewer = await t.addMember("viewer");
    const denied = await put<ErrorBody>(d.id, lteBody(d.wwan.devId, { apn: "internet" }), viewer.token);
    expect(denied.status).toBe(403);
    const other = await t.createTenant("radio-other");
    const foreign = await put<ErrorBody>(d.id, lteBody(d.wwan.devId, { apn: "internet" }), other.token);
    expect(foreign.status).toBe(404);
    expect((await storedInterfaces(d.id)).includes('"lte":')).toBe(false);
  });

  it("interface status returns the modem's reported state: registration, operator, technology, signal, SIM, IMEI, ICCID, no text", async () => {
    const d = await radioDevice();
    const state: InterfaceState = {
      devId: d.wwan.devId,
      name: "wwan0",
      operState: "up",
      IPv4: "100.71.20.37",
      IPv4Mask: 30,
      gateway: "",
      mac: "",
      mtu: 1500,
      rxBytes: 1,
      txBytes: 2,
      publicIp: "",
      publicPort: null,
      lte: {
        connected: true,
        simStatus: "ready",
        operator: "Lab Mobile",
        signal: { rssiDbm: -68, rsrpDbm: -97, rsrqDb: -11, sinrDb: 12.4 },
        accessTechnology: "lte",
        modemState: "connected",
        registration: "home",
        unlockRequired: null,
        operatorCode: "26201",
        imei: "867962040000001",
        iccid: "8949226000000000001",
        signalQuality: 67,
        bearerAddress: "100.71.20.37/30",
      },
    };
    t.deps.deviceStatus = {
      interfaceState: async () => ({ source: "reported", state, reportedAt: new Date() }),
      bgpState: async () => null,
    };
    try {
      const res = await t.api<InterfaceStatusResponse>("GET", `/api/devices/${d.id}/interfaces/${d.wwan.id}/status`, {
        token: t.admin.token,
      });
      expect(res.status).toBe(200);
      expect(res.body.state).toMatchObject({ lte: state.lte });
      expect(JSON.stringify(res.body)).not.toContain('"text"');
    } finally {
      t.deps.deviceStatus = undefined;
    }
  });
});
