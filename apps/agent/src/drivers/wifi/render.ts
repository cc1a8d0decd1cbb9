/**
 * hostapd.conf for one access point (hostapd 2.10 keys, see hostapd.conf(5)
 * and the annotated hostapd.conf Debian ships). The SSID goes in hex
 * (`ssid2`), so any UTF-8 SSID is written without quoting rules. WPA2 is
 * WPA-PSK with CCMP; WPA3 is SAE with management frame protection required;
 * the transition mode offers both with MFP optional.
 */
import type { ConfigWifi } from "@tern/protocol";

export interface HostapdRenderOptions {
  ifname: string;
  /** hostapd's control socket directory. */
  ctrlDir: string;
}

const KEY_MGMT: Record<ConfigWifi["security"], string> = {
  wpa2: "WPA-PSK",
  wpa3: "SAE",
  "wpa2-wpa3": "WPA-PSK SAE",
};
/** ieee80211w: 0 off, 1 optional, 2 required (WPA3 requires it). */
const MFP: Record<ConfigWifi["security"], number> = { wpa2: 0, wpa3: 2, "wpa2-wpa3": 1 };

export function renderHostapdConf(wifi: ConfigWifi, o: HostapdRenderOptions): string {
  const five = wifi.band === "5GHz";
  const lines = [
    "# Rendered by tern-agent (wifi driver); changes are overwritten.",
    `interface=${o.ifname}`,
    "driver=nl80211",
    `ctrl_interface=${o.ctrlDir}`,
    `ssid2=${Buffer.from(wifi.ssid, "utf8").toString("hex")}`,
    "utf8_ssid=1",
    `ignore_broadcast_ssid=${wifi.hidden ? 1 : 0}`,
    `country_code=${wifi.country}`,
    "ieee80211d=1",
    // 802.11h (DFS, TPC) is required on most 5 GHz channels outside UNII-1.
    ...(five ? ["ieee80211h=1"] : []),
    `hw_mode=${five ? "a" : "g"}`,
    `channel=${wifi.channel}`,
    "ieee80211n=1",
    ...(five ? ["ieee80211ac=1"] : []),
    "wmm_enabled=1",
    "auth_algs=1",
    "wpa=2",
    `wpa_key_mgmt=${KEY_MGMT[wifi.security]}`,
    "rsn_pairwise=CCMP",
    `ieee80211w=${MFP[wifi.security]}`,
    ...(wifi.security !== "wpa3" ? [`wpa_passphrase=${wifi.passphrase}`] : []),
    ...(wifi.security !== "wpa2" ? [`sae_password=${wifi.passphrase}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** The config with its passphrases replaced, for dumps. */
export function redactHostapd(text: string): string {
  return text.replace(/^((?:wpa_passphrase|sae_password)=).*$/gm, "$1<redacted>");
}
