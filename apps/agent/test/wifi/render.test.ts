/** hostapd.conf rendering: band, channel, country and each security mode. */
import type { ConfigWifi } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { WifiDriver } from "../../src/drivers/wifi/index.ts";
import { redactHostapd, renderHostapdConf } from "../../src/drivers/wifi/render.ts";
import { configWith } from "../support/configs.ts";

const wifi = (over: Partial<ConfigWifi> = {}): ConfigWifi => ({
  ssid: "Tern Café",
  band: "2.4GHz",
  channel: 6,
  country: "DE",
  security: "wpa2",
  passphrase: "correct horse battery",
  hidden: false,
  ...over,
});
const lines = (w: ConfigWifi) => renderHostapdConf(w, { ifname: "wlan0", ctrlDir: "/run/hostapd" }).split("\n");

describe("hostapd.conf", () => {
  it("2.4 GHz WPA2: hw_mode g, the channel, the country, WPA-PSK with CCMP; the SSID in hex", () => {
    const l = lines(wifi());
    expect(l).toEqual(
      expect.arrayContaining([
        "interface=wlan0",
        "driver=nl80211",
        `ssid2=${Buffer.from("Tern Café").toString("hex")}`,
        "country_code=DE",
        "hw_mode=g",
        "channel=6",
        "wpa=2",
        "wpa_key_mgmt=WPA-PSK",
        "rsn_pairwise=CCMP",
        "ieee80211w=0",
        "wpa_passphrase=correct horse battery",
      ]),
    );
    expect(l).not.toContain("ieee80211h=1");
    expect(l.some((x) => x.startsWith("sae_password="))).toBe(false);
  });

  it("5 GHz: hw_mode a, 802.11h and ac", () => {
    expect(lines(wifi({ band: "5GHz", channel: 36 }))).toEqual(
      expect.arrayContaining(["hw_mode=a", "channel=36", "ieee80211h=1", "ieee80211ac=1"]),
    );
  });

  it("WPA3 is SAE with management frame protection required; transition mode offers both", () => {
    const wpa3 = lines(wifi({ security: "wpa3" }));
    expect(wpa3).toEqual(expect.arrayContaining(["wpa_key_mgmt=SAE", "ieee80211w=2", "sae_password=correct horse battery"]));
    expect(wpa3.some((x) => x.startsWith("wpa_passphrase="))).toBe(false);
    expect(lines(wifi({ security: "wpa2-wpa3" }))).toEqual(
      expect.arrayContaining(["wpa_key_mgmt=WPA-PSK SAE", "ieee80211w=1", "wpa_passphrase=correct horse battery"]),
    );
  });

  it("dumps and plans never show the passphrase", () => {
    const text = renderHostapdConf(wifi({ security: "wpa2-wpa3" }), { ifname: "wlan0", ctrlDir: "/c" });
    expect(redactHostapd(text)).not.toContain("correct horse");
    const plan = new WifiDriver().plan(
      configWith({
        interfaces: [
          {
            devId: "mac:02:00:00:00:0e:01",
            name: "wlan0",
            type: "LAN",
            dhcp: false,
            address: "192.168.70.1/24",
            gateway: null,
            metric: 0,
            mtu: 1500,
            pathLabels: [],
            wifi: wifi(),
          },
        ],
      }),
      { mode: "system", runDir: "/run/tern-agent" },
    );
    expect(plan.files.map((f) => [f.path, f.mode])).toEqual([["/etc/hostapd/wlan0.conf", 0o600]]);
    expect(plan.files[0]?.content).not.toContain("correct horse");
    expect(plan.commands).toEqual([["systemctl", "restart", "hostapd@wlan0.service"]]);
  });
});

describe("config redaction", () => {
  it("plan/dump output of a config hides SIM PINs, APN passwords and WPA passphrases", async () => {
    const { redact } = await import("../../src/commands/deps.ts");
    const text = JSON.stringify(
      redact({
        interfaces: [
          { lte: { apn: "internet", pin: "1234", password: "apn-pw" }, wifi: { ssid: "lab", passphrase: "wifi-pw-123" } },
        ],
      }),
    );
    expect(text).not.toMatch(/1234|apn-pw|wifi-pw-123/);
    expect(text).toContain('"apn":"internet"');
  });
});
