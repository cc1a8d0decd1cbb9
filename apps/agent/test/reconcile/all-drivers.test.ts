/**
 * Every driver of createDrivers() together, through the reconcile loop, on
 * one fake router: the full sample config applies in DRIVER_ORDER with the
 * drivers wired to each other (LAN NAT on the tunnel devices the IKEv2 driver
 * uses, policy from measured quality, QoS marking the control server), a
 * repeat changes nothing, an unrenderable section is refused before anything
 * runs, and the empty config tears everything down.
 */
import { configHash, DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DRIVER_ORDER } from "../../src/drivers/driver.ts";
import { createDrivers } from "../../src/drivers/registry.ts";
import { silentLogger } from "../../src/log.ts";
import { agentPaths } from "../../src/paths.ts";
import type { LinkQuality, LinkQualityLookup } from "../../src/probes/index.ts";
import { Reconciler, StateStore } from "../../src/reconcile/index.ts";
import { emptyConfig, fullConfig, variant } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";

class Quality implements LinkQualityLookup {
  readonly loss = new Map<string, number>();
  quality(key: string): LinkQuality | null {
    const loss = this.loss.get(key);
    if (loss === undefined) return null;
    return {
      key,
      up: true,
      lossPercent: loss,
      rttMs: 5,
      srttMs: 5,
      jitterMs: 1,
      samples: 30,
      windowMs: 30_000,
      sent: 30,
      received: 30,
      target: "",
      sinceLastReplyMs: 0,
    };
  }
  intervalMs(): number {
    return 60_000;
  }
}

const full = fullConfig();
const tunnelId = full.tunnels[0]!.id;

describe("all drivers on one fake router", () => {
  let dirs: TempDirs;
  let sys: FakeSystem;
  let ctx: TestContext;
  let quality: Quality;
  let reconciler: Reconciler;
  let drivers: ReturnType<typeof createDrivers>;

  async function start(xfrm = false): Promise<void> {
    sys = new FakeSystem([
      { name: "wan0", mac: "02:00:00:00:0a:01" },
      { name: "wan1", mac: "02:00:00:00:0a:03" },
      { name: "lan0", mac: "02:00:00:00:0a:02" },
    ]);
    sys.kernel.xfrm = xfrm;
    quality = new Quality();
    drivers = createDrivers({ quality });
    ctx = driverContext(sys, dirs, { controlServer: { address: "203.0.113.10", port: 443 } });
    reconciler = new Reconciler({
      drivers,
      context: ctx,
      store: new StateStore(agentPaths(dirs.stateDir, dirs.runDir), silentLogger),
      log: silentLogger,
    });
    await reconciler.init();
  }

  beforeEach(async () => {
    dirs = await tempDirs("all-drivers");
  });
  afterEach(async () => {
    for (const d of drivers ?? []) await d.close?.();
    await dirs.remove();
  });

  it("full config → same again → empty: wired drivers, no-op repeat, complete teardown", async () => {
    await start();
    // The WAN the voip rule prefers is lossy: the policy must take the tunnel that carries the same label.
    quality.loss.set("wan:wan0", 50);
    const out = await reconciler.submit(full, { source: "test" });
    expect(out.error).toBeUndefined();
    // The full config has no modem or access point (this fake router has no radios): lte and wifi run with nothing to do.
    const radios: readonly string[] = ["lte", "wifi"];
    expect(out.drivers.map((d) => `${d.driver} ${d.ok} ${d.changed}`)).toEqual(
      DRIVER_ORDER.map((d) => `${d} true ${!radios.includes(d)}`),
    );
    expect(out.appliedHash).toBe(configHash(full));

    // Firewall: LAN 1:1 NAT on the device the IKEv2 driver really uses (kernel-libipsec here: ipsec0 only).
    const fw = sys.nft.tables.get("inet tern") ?? "";
    expect(fw).toContain('oifname "ipsec0" snat ip prefix to ip saddr map { 192.168.50.0/24 : 10.50.0.0/24 }');
    expect(fw).not.toContain("xfrm");
    // Policy: measured quality moved voip off wan0 onto the tunnel (via its remote loopback, resolved to ipsec0).
    expect(sys.kernel.defaultRoute(30000)).toBe("via 10.100.0.5 dev ipsec0");
    // QoS: the control server of the context is marked.
    expect(sys.nft.tables.get("inet tern_qos")).toContain("ip daddr 203.0.113.10 tcp dport 443");
    expect(sys.tc.roots.get("wan0")).toEqual({ kind: "htb", handle: "1:" });
    // Daemons run, forwarding is on, tunnel loopbacks and routes are in place.
    expect(["charon-systemd", "zebra", "bgpd", "keepalived", "kea-dhcp4"].map((c) => sys.processes.pids(c).length)).toEqual([
      1, 1, 1, 1, 1,
    ]);
    expect(sys.kernel.sysctls.get("net.ipv4.ip_forward")).toBe("1");
    expect(sys.kernel.routeLines().filter((r) => r.endsWith("proto 58"))).toContain(
      "10.100.0.5/32 dev ipsec0 src 10.100.0.4 metric 0 proto 58",
    );

    sys.clear();
    const again = await reconciler.submit(full, { source: "test" });
    expect(again.drivers.filter((d) => d.changed)).toEqual([]);
    expect(sys.mutating()).toEqual([]);

    sys.clear();
    const empty = await reconciler.submit(emptyConfig(), { source: "test" });
    expect(empty.ok).toBe(true);
    expect([...sys.processes.alive.values()]).toEqual([]);
    expect([...sys.nft.tables.keys()]).toEqual([]);
    expect(sys.tc.roots.size).toBe(0);
    expect(sys.kernel.routes).toEqual([]);
    expect(sys.kernel.ownedRules()).toEqual([]);
    expect(sys.kernel.links.flatMap((l) => l.addresses)).toEqual([]);
    expect(sys.kernel.sysctls.get("net.ipv4.ip_forward")).toBe("0");
    sys.clear();
    expect((await reconciler.submit(emptyConfig(), { source: "test" })).drivers.filter((d) => d.changed)).toEqual([]);
    expect(sys.mutating()).toEqual([]);
  });

  it("with XFRM interfaces, LAN NAT names each tunnel's own interface", async () => {
    await start(true);
    expect((await reconciler.submit(full, { source: "test" })).ok).toBe(true);
    expect(sys.nft.tables.get("inet tern")).toContain('oifname { "xfrm-d1", "xfrm-p2" } snat ip prefix to ip saddr map');
    expect(sys.kernel.link("xfrm-d1")).toMatchObject({ kind: "xfrm", ifId: 2 });
  });

  it("refuses a config with a section no driver can render before any driver runs", async () => {
    await start();
    const bad = variant(full, (c) => (c.firewall.lanNat[0]!.translated = "10.50.0.0/25"));
    expect(DeviceConfig.safeParse(bad).success).toBe(true);
    const out = await reconciler.submit(bad, { source: "test" });
    expect(out).toMatchObject({ ok: false, code: "INVALID_CONFIG", drivers: [], appliedHash: null });
    expect(out.error).toMatch(/^INVALID_CONFIG: firewall: firewall\.lanNat\.0: 1:1 NAT needs prefixes of the same size/);
    expect(sys.calls).toEqual([]);
  });

  it("reports tunnel SA state through inspect()", async () => {
    await start();
    await reconciler.submit(full, { source: "test" });
    const ikev2 = drivers.find((d) => d.name === "ikev2");
    const details = await ikev2?.inspect?.(full, ctx);
    expect(details?.lines).toEqual([
      expect.stringMatching(/^tern-device-1 DOWN: no IKE SA$/),
      expect.stringMatching(/^tern-peer-2 DOWN: no IKE SA$/),
    ]);
    expect(((details?.data ?? []) as { id: string }[]).map((t) => t.id)).toEqual([tunnelId, full.tunnels[1]!.id]);
  });
});
