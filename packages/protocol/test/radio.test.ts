/** LTE and WiFi settings: what the protocol accepts and refuses, and where it says so. */
import { describe, expect, it } from "vitest";
import { DeviceInterfaceUpdate, LteSettings, LteStatus, WifiSettings } from "../src/index.ts";

const issuePaths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  (r.error?.issues ?? []).map((i) => i.path.join("."));

describe("LteSettings", () => {
  it("fills defaults and accepts operator APNs", () => {
    expect(LteSettings.parse({ apn: "internet.t-mobile" })).toEqual({
      apn: "internet.t-mobile",
      ipType: "ipv4",
      auth: "none",
      username: "",
      allowRoaming: false,
    });
    for (const apn of ["web.vodafone.de", "iot-1.example", "a"]) expect(LteSettings.safeParse({ apn }).success).toBe(true);
  });

  it("refuses bad APNs, PINs and credentials at their field", () => {
    const cases: [unknown, string][] = [
      [{ apn: "" }, "apn"],
      [{ apn: "with space" }, "apn"],
      [{ apn: "x".repeat(64) }, "apn"],
      [{ apn: "ok", pin: "12345a" }, "pin"],
      [{ apn: "ok", pin: "123" }, "pin"],
      [{ apn: "ok", auth: "chap" }, "username"],
      [{ apn: "ok", auth: "pap", username: "u", password: 'a"b' }, "password"],
      [{ apn: "ok", extra: 1 }, ""],
    ];
    for (const [value, path] of cases) {
      const r = LteSettings.safeParse(value);
      expect(r.success, JSON.stringify(value)).toBe(false);
      expect(
        issuePaths(r).some((p) => p === path || (path === "" && p === "")),
        JSON.stringify(value),
      ).toBe(true);
    }
  });
});

describe("WifiSettings", () => {
  const ok = { ssid: "Office", band: "5GHz", channel: 36, country: "DE", passphrase: "12345678" };
  it("accepts each band's channels and no other", () => {
    expect(WifiSettings.parse(ok)).toMatchObject({ security: "wpa2", hidden: false });
    expect(WifiSettings.safeParse({ ...ok, band: "2.4GHz", channel: 11 }).success).toBe(true);
    expect(issuePaths(WifiSettings.safeParse({ ...ok, channel: 11 }))).toContain("channel");
    expect(issuePaths(WifiSettings.safeParse({ ...ok, band: "2.4GHz", channel: 40 }))).toContain("channel");
  });

  it("counts the SSID in bytes, refuses control characters, short passphrases and lower-case countries", () => {
    expect(WifiSettings.safeParse({ ...ok, ssid: "é".repeat(16) }).success).toBe(true);
    expect(issuePaths(WifiSettings.safeParse({ ...ok, ssid: "é".repeat(17) }))).toContain("ssid");
    expect(issuePaths(WifiSettings.safeParse({ ...ok, ssid: "a\nb" }))).toContain("ssid");
    expect(issuePaths(WifiSettings.safeParse({ ...ok, passphrase: "1234567" }))).toContain("passphrase");
    expect(issuePaths(WifiSettings.safeParse({ ...ok, country: "de" }))).toContain("country");
  });
});

describe("interfaces and status", () => {
  it("an interface update carries lte or wifi settings", () => {
    const r = DeviceInterfaceUpdate.safeParse({ devId: "usb:1", name: "wwan0", lte: { apn: "internet", pin: "1234" } });
    expect(r.success).toBe(true);
    expect(r.data?.lte?.pin).toBe("1234");
  });

  it("LteStatus takes the modem fields and still has no text field", () => {
    const base = {
      connected: false,
      simStatus: "locked",
      operator: "",
      signal: { rssiDbm: null, rsrpDbm: null, rsrqDb: null, sinrDb: null },
      accessTechnology: "none",
    };
    expect(LteStatus.safeParse({ ...base, modemState: "locked", unlockRequired: "sim-pin", imei: "1", iccid: "2" }).success).toBe(
      true,
    );
    expect(LteStatus.safeParse({ ...base, text: "locked" }).success).toBe(false);
  });
});
