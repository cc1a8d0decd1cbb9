/**
 * Config sequences against the fake system (A → B → A → empty), comparing the
 * recorded commands with expected text, tailscale-style.
 */
import { writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LinksDriver, loadOwned } from "../../src/drivers/links/index.ts";
import { iface, linksConfig, route } from "../support/configs.ts";
import { driverContext, type TempDirs, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";

const A = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.2/24", gateway: "10.100.1.1", metric: 0 }),
    iface("lan0", { address: "192.168.50.1/24", mtu: 1400 }),
  ],
  [route("172.16.0.0/16", "10.100.1.1", { ifname: "wan0", metric: 10 })],
);
const B = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.3/24", gateway: "10.100.1.254", metric: 5 }),
    iface("lan0", { address: "192.168.60.1/24" }),
  ],
  [route("172.16.0.0/16", "10.100.1.254", { ifname: "wan0", metric: 10 }), route("10.200.0.0/16", "192.168.60.254")],
);
const EMPTY = linksConfig([]);

describe("links driver: config sequences on a fake system", () => {
  let dirs: TempDirs;
  let sys: FakeSystem;
  let driver: LinksDriver;
  beforeEach(async () => {
    dirs = await tempDirs("links-seq");
    sys = new FakeSystem([{ name: "wan0" }, { name: "lan0", addresses: ["192.168.50.250/24"] }, { name: "mgmt0", up: true }]);
    // A route the agent did not add must survive everything.
    sys.routes.push({ table: "main", dst: "10.99.0.0/16", gateway: null, dev: "mgmt0", metric: 0, proto: "kernel" });
    driver = new LinksDriver();
  });
  afterEach(async () => {
    driver.close();
    await dirs.remove();
  });
  const apply = async (config = A) => {
    const outcome = await driver.apply(config, driverContext(sys, dirs));
    return { changed: outcome.changed, commands: sys.takeMutating() };
  };

  it("A → A → B → A → empty → empty", async () => {
    expect(await apply(A)).toEqual({
      changed: true,
      commands: [
        "ip link set dev wan0 up",
        "ip link set dev lan0 mtu 1400",
        "ip link set dev lan0 up",
        "ip addr add 10.100.1.2/24 dev wan0",
        "ip addr add 192.168.50.1/24 dev lan0",
        // A LAN: this router forwards from now on (the value it had is recorded to restore later).
        "sysctl -w net.ipv4.ip_forward=1",
        "ip route add default via 10.100.1.1 dev wan0 metric 0 proto 57",
        "ip route add 172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10 proto 57",
        // wan0's own address leaves through wan0 (source routing, ./source-routing.ts).
        "ip -4 rule add priority 29000 from 10.100.1.2 lookup main suppress_prefixlength 0",
        "ip -4 rule add priority 29001 from 10.100.1.2 lookup 29000",
        "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
        "ip -4 route replace default via 10.100.1.1 dev wan0 table 29000 proto 57",
        // Routes through wan0 stop attracting traffic while it has no carrier.
        "sysctl -w net/ipv4/conf/wan0/ignore_routes_with_linkdown=1",
      ],
    });
    // Same config again: nothing mutating at all.
    expect(await apply(A)).toEqual({ changed: false, commands: [] });

    expect(await apply(B)).toEqual({
      changed: true,
      commands: [
        "ip addr del 192.168.50.1/24 dev lan0",
        "ip addr del 10.100.1.2/24 dev wan0",
        "ip link set dev lan0 mtu 1500",
        "ip addr add 10.100.1.3/24 dev wan0",
        "ip addr add 192.168.60.1/24 dev lan0",
        // The kernel dropped the old routes with their gateway's address; these are all adds.
        "ip route add default via 10.100.1.254 dev wan0 metric 5 proto 57",
        "ip route add 172.16.0.0/16 via 10.100.1.254 dev wan0 metric 10 proto 57",
        "ip route add 10.200.0.0/16 via 192.168.60.254 metric 0 proto 57",
        "ip -4 rule del priority 29000",
        "ip -4 rule del priority 29001",
        "ip -4 rule add priority 29000 from 10.100.1.3 lookup main suppress_prefixlength 0",
        "ip -4 rule add priority 29001 from 10.100.1.3 lookup 29000",
        "ip -4 route flush table 29000",
        "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
        "ip -4 route replace default via 10.100.1.254 dev wan0 table 29000 proto 57",
      ],
    });
    expect(await apply(B)).toEqual({ changed: false, commands: [] });

    expect((await apply(A)).commands).toEqual([
      "ip addr del 192.168.60.1/24 dev lan0",
      "ip addr del 10.100.1.3/24 dev wan0",
      "ip link set dev lan0 mtu 1400",
      "ip addr add 10.100.1.2/24 dev wan0",
      "ip addr add 192.168.50.1/24 dev lan0",
      "ip route add default via 10.100.1.1 dev wan0 metric 0 proto 57",
      "ip route add 172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10 proto 57",
      "ip -4 rule del priority 29000",
      "ip -4 rule del priority 29001",
      "ip -4 rule add priority 29000 from 10.100.1.2 lookup main suppress_prefixlength 0",
      "ip -4 rule add priority 29001 from 10.100.1.2 lookup 29000",
      "ip -4 route flush table 29000",
      "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
      "ip -4 route replace default via 10.100.1.1 dev wan0 table 29000 proto 57",
    ]);

    expect(await apply(EMPTY)).toEqual({
      changed: true,
      commands: [
        "ip addr del 192.168.50.1/24 dev lan0",
        "ip addr del 10.100.1.2/24 dev wan0",
        // The original MTU comes back; links stay up (taking them down could cut the router off).
        "ip link set dev lan0 mtu 1500",
        // Nothing to route any more: forwarding goes back to what it was.
        "sysctl -w net.ipv4.ip_forward=0",
        // No route del: the kernel dropped the routes with their gateway's subnet.
        "ip -4 rule del priority 29000",
        "ip -4 rule del priority 29001",
        // Only wan0's blackhole default was left in its table.
        "ip -4 route flush table 29000",
      ],
    });
    expect(await apply(EMPTY)).toEqual({ changed: false, commands: [] });

    // Only what the agent added is gone: the pre-existing address and route are still there.
    expect(sys.links.find((l) => l.name === "lan0")?.addresses).toEqual(["192.168.50.250/24"]);
    expect(sys.routes).toEqual([{ table: "main", dst: "10.99.0.0/16", gateway: null, dev: "mgmt0", metric: 0, proto: "kernel" }]);
    expect(await loadOwned(dirs.stateDir)).toEqual({ version: 1, addresses: [], mtu: {} });
  });

  it("deletes owned routes that are no longer wanted while their gateway stays reachable", async () => {
    await apply(A);
    const noRoutes = linksConfig([
      iface("wan0", { type: "WAN", address: "10.100.1.2/24" }),
      iface("lan0", { address: "192.168.50.1/24", mtu: 1400 }),
    ]);
    expect((await apply(noRoutes)).commands).toEqual([
      "ip route del default via 10.100.1.1 dev wan0 metric 0 proto 57",
      "ip route del 172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10 proto 57",
      // No gateway, no source routing for wan0.
      "ip -4 rule del priority 29000",
      "ip -4 rule del priority 29001",
      "ip -4 route flush table 29000",
    ]);
  });

  it("changes a route's gateway in place with replace when its address stays", async () => {
    await apply(A);
    const moved = linksConfig(A.interfaces, [route("172.16.0.0/16", "10.100.1.9", { ifname: "wan0", metric: 10 })]);
    expect((await apply(moved)).commands).toEqual(["ip route replace 172.16.0.0/16 via 10.100.1.9 dev wan0 metric 10 proto 57"]);
  });

  it("never adopts an address it did not add, and repairs drift in what it owns", async () => {
    const onExisting = linksConfig([iface("lan0", { address: "192.168.50.250/24" })]);
    expect((await apply(onExisting)).commands).toEqual(["ip link set dev lan0 up", "sysctl -w net.ipv4.ip_forward=1"]);
    expect((await apply(EMPTY)).commands).toEqual(["sysctl -w net.ipv4.ip_forward=0"]);
    expect(sys.links.find((l) => l.name === "lan0")?.addresses).toEqual(["192.168.50.250/24"]);

    await apply(A);
    // Someone deletes an owned address and a route by hand: the next apply puts back exactly those.
    await sys.run(["ip", "addr", "del", "192.168.50.1/24", "dev", "lan0"]);
    await sys.run(["ip", "route", "del", "172.16.0.0/16", "via", "10.100.1.1", "dev", "wan0", "metric", "10", "proto", "57"]);
    sys.takeMutating();
    expect((await apply(A)).commands).toEqual([
      "ip addr add 192.168.50.1/24 dev lan0",
      "ip route add 172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10 proto 57",
    ]);
  });

  it("fails before changing anything when an interface is missing", async () => {
    const missing = linksConfig([iface("wan0", { address: "10.0.0.2/24" }), iface("wan9", { address: "10.0.9.2/24" })]);
    await expect(driver.apply(missing, driverContext(sys, dirs))).rejects.toMatchObject({ code: "LINK_NOT_FOUND" });
    expect(sys.mutating()).toEqual([]);
  });

  it("reports a foreign route in the way instead of replacing it", async () => {
    sys.routes.push({ table: "main", dst: "0.0.0.0/0", gateway: "10.100.1.77", dev: "wan0", metric: 0, proto: "dhcp" });
    sys.links[0]?.addresses.push("10.100.1.50/24");
    await expect(driver.apply(A, driverContext(sys, dirs))).rejects.toThrow(/ip route add default via 10.100.1.1 .*File exists/);
    expect(sys.routes.find((r) => r.dst === "0.0.0.0/0")?.gateway).toBe("10.100.1.77");
  });

  it("DHCP WAN: starts one dhclient, applies the lease itself, follows lease changes, stops on teardown", async () => {
    const dhcpWan = linksConfig([iface("wan0", { type: "WAN", dhcp: true, metric: 20 })]);
    const first = await apply(dhcpWan);
    expect(first.commands).toEqual([
      "ip link set dev wan0 up",
      `dhclient -4 -nw -cf ${dirs.runDir}/links/dhclient.conf -sf ${dirs.runDir}/links/dhclient-script.sh -lf ${dirs.runDir}/links/dhclient-wan0.leases -pf ${dirs.runDir}/links/dhclient-wan0.pid wan0`,
    ]);
    expect(await apply(dhcpWan)).toEqual({ changed: false, commands: [] });

    // dhclient's script records a lease; the next apply adds the address and the default route with the config's metric.
    const lease = `${dirs.runDir}/links/dhclient-wan0.lease`;
    await writeFile(lease, "reason=BOUND\nip=100.64.3.7\nmask=255.255.255.0\nrouters=100.64.3.1\nlease=600\n");
    expect((await apply(dhcpWan)).commands).toEqual([
      "ip addr add 100.64.3.7/24 dev wan0",
      "ip route add default via 100.64.3.1 dev wan0 metric 20 proto 57",
      "ip -4 rule add priority 29000 from 100.64.3.7 lookup main suppress_prefixlength 0",
      "ip -4 rule add priority 29001 from 100.64.3.7 lookup 29000",
      "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
      "ip -4 route replace default via 100.64.3.1 dev wan0 table 29000 proto 57",
      "sysctl -w net/ipv4/conf/wan0/ignore_routes_with_linkdown=1",
    ]);
    await writeFile(lease, "reason=BOUND\nip=100.64.4.8\nmask=255.255.255.0\nrouters=100.64.4.1\nlease=600\n");
    expect((await apply(dhcpWan)).commands).toEqual([
      "ip addr del 100.64.3.7/24 dev wan0",
      "ip addr add 100.64.4.8/24 dev wan0",
      "ip route add default via 100.64.4.1 dev wan0 metric 20 proto 57",
      "ip -4 rule del priority 29000",
      "ip -4 rule del priority 29001",
      "ip -4 rule add priority 29000 from 100.64.4.8 lookup main suppress_prefixlength 0",
      "ip -4 rule add priority 29001 from 100.64.4.8 lookup 29000",
      "ip -4 route flush table 29000",
      "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
      "ip -4 route replace default via 100.64.4.1 dev wan0 table 29000 proto 57",
    ]);

    // A dead dhclient is restarted.
    sys.killAllDhclients();
    expect((await apply(dhcpWan)).commands).toEqual([expect.stringMatching(/^dhclient -4 -nw .* wan0$/)]);

    expect((await apply(EMPTY)).commands).toEqual([
      expect.stringMatching(/^dhclient -4 -x .* wan0$/),
      "ip addr del 100.64.4.8/24 dev wan0",
      "ip -4 rule del priority 29000",
      "ip -4 rule del priority 29001",
      // The WAN's table held its blackhole default (the gateway route went with the address).
      "ip -4 route flush table 29000",
    ]);
    await expect(readFile(lease, "utf8")).rejects.toThrow(/ENOENT/);
    expect(await apply(EMPTY)).toEqual({ changed: false, commands: [] });
  });

  it("asks for a reconcile when a lease changes under a running agent", async () => {
    const reasons: string[] = [];
    const ctx = driverContext(sys, dirs, { requestReconcile: (r) => reasons.push(r) });
    await driver.apply(linksConfig([iface("wan0", { type: "WAN", dhcp: true })]), ctx);
    await writeFile(
      `${dirs.runDir}/links/dhclient-wan0.lease`,
      "reason=BOUND\nip=100.64.3.7\nmask=255.255.255.0\nrouters=100.64.3.1\n",
    );
    await expect.poll(() => reasons, { timeout: 3000 }).toEqual(["dhcp lease changed on wan0"]);
  });

  it("does not miss a lease that lands while the apply that started dhclient is still running", async () => {
    const reasons: string[] = [];
    const lease = `${dirs.runDir}/links/dhclient-wan0.lease`;
    // A fast DHCP server: the lease exists before the driver starts watching.
    sys.on(["dhclient"], (argv) => {
      if (argv[0] === "dhclient" && argv.includes("-nw"))
        writeFileSync(lease, "reason=BOUND\nip=100.64.3.7\nmask=255.255.255.0\nrouters=100.64.3.1\n");
      return undefined;
    });
    await driver.apply(
      linksConfig([iface("wan0", { type: "WAN", dhcp: true })]),
      driverContext(sys, dirs, { requestReconcile: (r) => reasons.push(r) }),
    );
    await expect.poll(() => reasons, { timeout: 3000 }).toEqual(["dhcp lease changed on wan0"]);
  });

  it("observes interface state for status", async () => {
    await apply(A);
    const part = await driver.observe(A, driverContext(sys, dirs));
    expect(part.interfaces).toEqual([
      expect.objectContaining({
        name: "wan0",
        operState: "up",
        IPv4: "10.100.1.2",
        IPv4Mask: 24,
        gateway: "10.100.1.1",
        mtu: 1500,
      }),
      expect.objectContaining({ name: "lan0", IPv4: "192.168.50.250", IPv4Mask: 24, gateway: "", mtu: 1400, rxBytes: 1002 }),
    ]);
    // The kernel's packet, error and drop counters travel beside the bytes (statistics history).
    expect(part.interfaces?.[1]).toMatchObject({
      rxPackets: 12,
      txPackets: 22,
      rxErrors: 1,
      txErrors: 3,
      rxDrops: 2,
      txDrops: 4,
    });
    // Without a config it reports every Ethernet link, identified by MAC.
    const bare = await driver.observe(EMPTY, driverContext(sys, dirs));
    expect(bare.interfaces?.map((i) => i.devId)).toEqual(
      sys.links.filter((l) => l.linkType === "ether").map((l) => `mac:${l.mac}`),
    );
  });
});
