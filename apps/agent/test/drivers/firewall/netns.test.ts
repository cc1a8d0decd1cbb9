/**
 * The firewall driver against a real kernel in throw-away namespaces:
 *
 *   lanh (192.168.50.10) ── lan0 [rtr] ipsec0 ── remote (10.100.0.5, 10.60.0.1)
 *                                wan0
 *                                 │
 *                               isp (10.100.1.1)
 *
 * `ipsec0` is a veth here: the NAT rules match the tunnel side by device
 * name, so the translation is the same as over a real libipsec TUN.
 */
import { type Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FirewallDriver } from "../../../src/drivers/firewall/index.ts";
import { emptyConfig, fullConfig, variant } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { NetnsRunner } from "../../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("firewall netns test", ["nft", "conntrack", "ping"]);

describe.runIf(enabled)("firewall driver in namespaces", () => {
  const scope = new NetnsScope("fw");
  let rtr: Netns;
  let lanh: Netns;
  let remote: Netns;
  let isp: Netns;
  let runner: NetnsRunner;
  let ctx: DisposableContext;
  const driver = new FirewallDriver();
  const config = fullConfig();

  beforeAll(async () => {
    [rtr, lanh, remote, isp] = (await Promise.all(["rtr", "lanh", "remote", "isp"].map((n) => scope.netns(n)))) as [
      Netns,
      Netns,
      Netns,
      Netns,
    ];
    await scope.veth(rtr, "lan0", lanh, "eth0");
    await scope.veth(rtr, "ipsec0", remote, "tun0");
    await scope.veth(rtr, "wan0", isp, "eth0");
    await rtr.addAddress("lan0", "192.168.50.2/24");
    await rtr.addAddress("ipsec0", "10.100.0.4/31");
    await rtr.addAddress("wan0", "10.100.1.2/24");
    await lanh.addAddress("eth0", "192.168.50.10/24");
    await remote.addAddress("tun0", "10.100.0.5/31");
    await remote.addAddress("lo", "10.60.0.1/24");
    await isp.addAddress("eth0", "10.100.1.1/24");
    await rtr.sysctl("net.ipv4.ip_forward", "1");
    await lanh.exec(["ip", "route", "add", "default", "via", "192.168.50.2"]);
    await rtr.exec(["ip", "route", "add", "10.60.0.0/24", "via", "10.100.0.5", "dev", "ipsec0"]);
    await remote.exec(["ip", "route", "add", "10.50.0.0/24", "via", "10.100.0.4"]);
    await isp.exec(["ip", "route", "add", "192.168.50.0/24", "via", "10.100.1.2"]);
    runner = new NetnsRunner(rtr.name);
    ctx = await testContext(runner);
  }, 60_000);

  afterAll(async () => {
    await ctx?.dispose();
    await scope.cleanup();
  });

  it("applies, then re-applying runs only reads", async () => {
    expect(await driver.apply(config, ctx)).toEqual({ changed: true });
    const listed = await rtr.exec(["nft", "list", "table", "inet", "tern"]);
    expect(listed.stdout).toContain("snat ip prefix to ip saddr map { 192.168.50.0/24 : 10.50.0.0/24 }");
    runner.calls.length = 0;
    expect(await driver.apply(config, ctx)).toEqual({ changed: false });
    expect(runner.calls.every(({ argv }) => argv[0] === "nft" && argv[1] === "list")).toBe(true);
  });

  it("translates LAN → tunnel (snat) and tunnel → LAN (dnat), seen in conntrack", async () => {
    await rtr.exec(["conntrack", "-F"], { allowFailure: true });
    await lanh.exec(["ping", "-c", "1", "-W", "2", "10.60.0.1"]);
    await remote.exec(["ping", "-c", "1", "-W", "2", "-I", "10.60.0.1", "10.50.0.10"]);
    const ct = (await rtr.exec(["conntrack", "-L", "-p", "icmp"])).stdout;
    // Outbound: original 192.168.50.10 → 10.60.0.1, reply addressed to the translated 10.50.0.10.
    expect(ct).toMatch(/src=192\.168\.50\.10 dst=10\.60\.0\.1 .*src=10\.60\.0\.1 dst=10\.50\.0\.10/);
    // Inbound: original 10.60.0.1 → 10.50.0.10, reply comes from the real 192.168.50.10.
    expect(ct).toMatch(/src=10\.60\.0\.1 dst=10\.50\.0\.10 .*src=192\.168\.50\.10 dst=10\.60\.0\.1/);
  });

  it("answers WAN pings with identifiers below and above 1024 even behind a catch-all deny", async () => {
    const denyAll = variant(config, (c) => {
      c.firewall.inbound.push({
        priority: 1000,
        action: "deny",
        interface: "wan0",
        protocol: "any",
        source: null,
        destination: null,
        ports: null,
      });
    });
    await driver.apply(denyAll, ctx);
    for (const id of ["1", "7", "1023", "1024", "1025", "40000", "65535"]) {
      const r = await isp.exec(["ping", "-c", "2", "-i", "0.2", "-W", "2", "-e", id, "10.100.1.2"], { allowFailure: true });
      expect(r.stdout, `identifier ${id}`).toMatch(/2 received/);
    }
    // The deny is live: ISP traffic forwarded to the LAN is dropped.
    const fwd = await isp.exec(["ping", "-c", "2", "-i", "0.2", "-W", "1", "192.168.50.10"], { allowFailure: true });
    expect(fwd.stdout).toMatch(/0 received/);
    await driver.apply(config, ctx);
    const back = await isp.exec(["ping", "-c", "1", "-W", "2", "192.168.50.10"], { allowFailure: true });
    expect(back.stdout).toMatch(/1 received/);
  });

  it("keeps an established NATed flow through rule swaps without losing a packet", async () => {
    const b = variant(config, (c) => {
      c.firewall.inbound[0]!.ports = "2222";
      c.firewall.outbound.push({
        priority: 1,
        action: "deny",
        interface: "wan0",
        protocol: "tcp",
        source: null,
        destination: null,
        ports: "25",
      });
    });
    const ping = lanh.exec(["ping", "-i", "0.01", "-c", "300", "-q", "10.60.0.1"], { timeoutMs: 20_000, allowFailure: true });
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await driver.apply(i % 2 === 0 ? b : config, ctx);
    }
    const out = await ping;
    expect(out.stdout).toMatch(/300 packets transmitted, 300 received/);
  }, 30_000);

  it("tears down only its own table", async () => {
    await rtr.exec(["nft", "add", "table", "inet", "other"]);
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: true });
    const tables = (await rtr.exec(["nft", "list", "tables"])).stdout;
    expect(tables).toContain("table inet other");
    expect(tables).not.toContain("table inet tern");
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: false });
  });
});
