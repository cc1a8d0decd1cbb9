/**
 * WiFi access point in namespaces. This kernel has no mac80211_hwsim (no
 * nl80211 radio can exist here), so:
 * 1. hostapd's own configuration check: Debian's hostapd 2.10 reads each
 *    rendered config (both bands, every security mode) on an interface in a
 *    namespace. It parses the whole file before it asks the kernel for the
 *    radio, so a config it accepts gets as far as "Failed to initialize
 *    driver 'nl80211'"; one it refuses says "errors found in configuration
 *    file" (the control case shows the check can fail).
 * 2. The spec's known fault: a band switch 2.4 → 5 GHz restarts the access
 *    point, and the DHCP server of that interface (real kea-dhcp4) restarts
 *    with it and serves a real dhclient afterwards, without any router
 *    restart. The access point is a stand-in hostapd (./stand-in/hostapd)
 *    that does to the interface what hostapd does when it starts.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import type { ConfigDhcpServer, ConfigInterface, ConfigWifi, DeviceConfig } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DhcpDriver } from "../../src/drivers/dhcp/index.ts";
import { WifiDriver } from "../../src/drivers/wifi/index.ts";
import { renderHostapdConf } from "../../src/drivers/wifi/render.ts";
import { configWith } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { mutatingCommands } from "../support/mutating.ts";
import { NetnsRunner } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("wifi driver (hostapd, kea)", [
  "hostapd",
  "kea-dhcp4",
  "dhclient",
  "start-stop-daemon",
  "python3",
]);
const standInHostapd = new URL("./stand-in/hostapd", import.meta.url).pathname;

const wifi = (over: Partial<ConfigWifi> = {}): ConfigWifi => ({
  ssid: "Tern Lab",
  band: "2.4GHz",
  channel: 6,
  country: "DE",
  security: "wpa2",
  passphrase: "correct horse battery",
  hidden: false,
  ...over,
});
const wlan = (w: ConfigWifi): ConfigInterface => ({
  devId: "mac:02:00:00:00:0e:01",
  name: "wlan0",
  type: "LAN",
  dhcp: false,
  address: "192.168.70.1/24",
  gateway: null,
  metric: 0,
  mtu: 1500,
  pathLabels: [],
  wifi: w,
});
const server: ConfigDhcpServer = {
  interface: "wlan0",
  subnet: "192.168.70.0/24",
  rangeStart: "192.168.70.100",
  rangeEnd: "192.168.70.199",
  dns: ["192.168.70.1"],
  options: [],
  reservations: [],
  defaultLeaseTime: 3600,
  maxLeaseTime: 7200,
};
const configFor = (w: ConfigWifi): DeviceConfig => configWith({ interfaces: [wlan(w)], dhcp: [server] });

describe.runIf(enabled)("wifi access point in namespaces", () => {
  const scope = new NetnsScope("wifi");
  let dir: TempDirs;
  let edge: Netns;
  let client: Netns;
  let ctx: TestContext;
  const wifiDriver = new WifiDriver({ hostapd: standInHostapd });
  const dhcpDriver = new DhcpDriver({ interfaceResets: wifiDriver });
  /** The two drivers in DRIVER_ORDER, as the reconcile loop runs them. */
  const apply = async (config: DeviceConfig) => {
    const a = await wifiDriver.apply(config, ctx);
    const b = await dhcpDriver.apply(config, ctx);
    return a.changed || b.changed;
  };
  const keaPid = async () => (await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.kea-dhcp4.pid"), "utf8")).trim();
  let n = 0;
  /** One dhclient run in the client namespace; the address it was given. */
  async function lease(): Promise<string> {
    n += 1;
    const base = join(dir.root, `c${n}`);
    await writeFile(`${base}.sh`, `#!/bin/sh\n[ "$reason" = BOUND ] && echo "$new_ip_address" > ${base}.ip\nexit 0\n`, {
      mode: 0o755,
    });
    const args = ["-4", "-sf", `${base}.sh`, "-lf", `${base}.leases`, "-pf", `${base}.pid`, "eth0"];
    await client.exec(["timeout", "25", "dhclient", "-1", ...args], { timeoutMs: 30_000 });
    await client.exec(["dhclient", "-r", ...args], { allowFailure: true, timeoutMs: 15_000 });
    return (await readFile(`${base}.ip`, "utf8")).trim();
  }

  beforeAll(async () => {
    dir = await tempDirs("wifi");
    edge = await scope.netns("edge");
    client = await scope.netns("sta");
    // The radio link between the AP's wlan0 and a station, as a veth pair.
    await scope.veth(edge, "wlan0", client, "eth0");
    await edge.addAddress("wlan0", "192.168.70.1/24");
    ctx = driverContext(new NetnsRunner(edge.name), join(dir.root, "edge"));
  }, 30_000);

  afterAll(async () => {
    await apply(configWith({})).catch(() => {});
    await scope.cleanup();
    await dir?.remove();
  }, 30_000);

  it("hostapd accepts every rendered config (both bands, WPA2, WPA3, transition) and refuses a broken one", async () => {
    const hasRadio = (await edge.exec(["test", "-d", "/sys/class/ieee80211"], { allowFailure: true })).exitCode === 0;
    console.log(`wifi: nl80211 radios ${hasRadio ? "present" : "absent (no mac80211_hwsim): configuration check only"}`);
    const variants: ConfigWifi[] = [
      wifi(),
      wifi({ band: "5GHz", channel: 36 }),
      wifi({ band: "5GHz", channel: 100, security: "wpa3" }),
      wifi({ band: "2.4GHz", channel: 13, security: "wpa2-wpa3", hidden: true }),
    ];
    const check = async (text: string) => {
      const file = join(dir.root, `check-${n++}.conf`);
      await writeFile(file, text, { mode: 0o600 });
      const r = await edge.exec(["timeout", "10", "hostapd", file], { allowFailure: true, timeoutMs: 15_000 });
      return `${r.stdout}${r.stderr}`;
    };
    for (const v of variants) {
      const out = await check(renderHostapdConf(v, { ifname: "wlan0", ctrlDir: join(dir.root, "ctrl") }));
      expect(out, `${v.band} ${v.security}`).not.toMatch(/errors? found in configuration file|Line \d+:/);
      if (!hasRadio) expect(out).toContain("Failed to initialize driver 'nl80211'");
    }
    const broken = await check(
      `${renderHostapdConf(wifi(), { ifname: "wlan0", ctrlDir: join(dir.root, "ctrl") })}wpa_key_mgmt=NONSENSE\n`,
    );
    expect(broken).toMatch(/errors? found in configuration file/);
  }, 60_000);

  it("serves DHCP on the 2.4 GHz access point", async () => {
    expect(await apply(configFor(wifi()))).toBe(true);
    expect(await lease()).toMatch(/^192\.168\.70\.1\d\d$/);
  }, 60_000);

  it("re-applying the same config restarts nothing", async () => {
    const before = await keaPid();
    const r = ctx.runner as NetnsRunner;
    r.clear();
    expect(await apply(configFor(wifi()))).toBe(false);
    expect(mutatingCommands(r.calls)).toEqual([]);
    expect(await keaPid()).toBe(before);
  }, 30_000);

  it("switching 2.4 → 5 GHz restarts the access point and the DHCP server of its interface, which then serves, with no router restart", async () => {
    const keaBefore = await keaPid();
    expect(await apply(configFor(wifi({ band: "5GHz", channel: 36 })))).toBe(true);
    const starts = (await readFile(join(ctx.runDir, "wifi/hostapd-starts.log"), "utf8")).trim().split("\n");
    expect(starts.at(-2)).toMatch(/wlan0 hw_mode=g channel=6$/);
    expect(starts.at(-1)).toMatch(/wlan0 hw_mode=a channel=36$/);
    expect(await keaPid()).not.toBe(keaBefore);
    expect(ctx.logs.some((l) => l.includes("kea-dhcp4 restarted") && l.includes("wlan0"))).toBe(true);
    expect(await lease()).toMatch(/^192\.168\.70\.1\d\d$/);
  }, 60_000);

  it("a hostapd that dies between applies is started again and the DHCP server of its interface restarts with it", async () => {
    const config = configFor(wifi({ band: "5GHz", channel: 36 }));
    const hostapdPid = (await readFile(join(ctx.runDir, "wifi/hostapd-wlan0.pid"), "utf8")).trim();
    await edge.exec(["kill", "-9", hostapdPid]);
    const keaBefore = await keaPid();
    const asked: string[] = [];
    const healed = await wifiDriver.heal(config, { ...ctx, requestReconcile: (why) => asked.push(why) });
    expect(healed).toEqual(["hostapd (wlan0) was not running: started"]);
    expect(asked).toEqual(["wifi: access point on wlan0 restarted"]);
    // The reconcile it asked for: the AP is as configured, the DHCP server restarts for the reset interface.
    expect(await apply(config)).toBe(true);
    expect(await keaPid()).not.toBe(keaBefore);
    expect(await lease()).toMatch(/^192\.168\.70\.1\d\d$/);
    expect(await wifiDriver.heal(config, ctx)).toEqual([]);
  }, 60_000);
});
