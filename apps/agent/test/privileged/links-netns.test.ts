/**
 * The links driver on real interfaces in throw-away namespaces: what it
 * applies is really there, a re-apply runs no mutating command, an empty
 * config removes only what the agent added, and a DHCP WAN follows a real
 * DHCP server (dnsmasq) through dhclient.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinksDriver } from "../../src/drivers/links/index.ts";
import { silentLogger } from "../../src/log.ts";
import { agentPaths } from "../../src/paths.ts";
import { Reconciler, StateStore } from "../../src/reconcile/index.ts";
import { iface, linksConfig, route } from "../support/configs.ts";
import { driverContext } from "../support/context.ts";
import { addressesOf, mtuOf, NetnsRunner, routesOf } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("agent links driver in namespaces", ["ip", "dhclient", "dnsmasq", "ping"]);

const A = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.2/24", gateway: "10.100.1.1", metric: 5 }),
    iface("lan0", { address: "192.168.50.1/24", mtu: 1400 }),
  ],
  [route("172.16.0.0/16", "10.100.1.1", { ifname: "wan0", metric: 10 })],
);
const B = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.3/24", gateway: "10.100.1.1", metric: 7 }),
    iface("lan0", { address: "192.168.60.1/24", mtu: 1500 }),
  ],
  [route("10.200.0.0/16", "192.168.60.254")],
);
const EMPTY = linksConfig([]);

describe.runIf(enabled)("links driver on real interfaces (namespaces)", { timeout: 60_000 }, () => {
  const scope = new NetnsScope("agcore");
  let edge: Netns;
  let wan: Netns;
  let root: string;
  let runner: NetnsRunner;
  const driver = new LinksDriver();
  const ctx = () => driverContext(runner, { stateDir: join(root, "state"), runDir: join(root, "run") });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "tern-links-netns-"));
    edge = await scope.netns("edge");
    wan = await scope.netns("wan");
    await scope.veth(edge, "wan0", wan, "up0");
    await scope.veth(edge, "lan0", wan, "lanpeer0");
    await wan.addAddress("up0", "10.100.1.1/24");
    // State the agent did not make: must survive every apply, teardown included.
    await edge.addAddress("lan0", "192.168.50.250/24");
    await edge.exec(["ip", "route", "add", "10.99.0.0/16", "dev", "lan0", "proto", "static"]);
    runner = new NetnsRunner(edge);
  });
  afterAll(async () => {
    driver.close();
    await scope.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  it("applies addresses, MTU, the WAN default route and static routes for real", async () => {
    expect(await driver.apply(A, ctx())).toEqual({ changed: true });
    expect(await addressesOf(edge, "wan0")).toEqual(["10.100.1.2/24"]);
    expect((await addressesOf(edge, "lan0")).sort()).toEqual(["192.168.50.1/24", "192.168.50.250/24"]);
    expect(await mtuOf(edge, "lan0")).toBe(1400);
    expect(await routesOf(edge, "proto", "57")).toEqual([
      "default via 10.100.1.1 dev wan0 metric 5",
      "172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10",
    ]);
    // The route works: the WAN gateway answers.
    expect((await edge.exec(["ping", "-c", "1", "-W", "2", "10.100.1.1"])).exitCode).toBe(0);
  });

  it("re-applying the same config issues no mutating command", async () => {
    runner.takeMutating();
    expect(await driver.apply(A, ctx())).toEqual({ changed: false });
    expect(runner.takeMutating()).toEqual([]);
  });

  it("moves to another config and back", async () => {
    await driver.apply(B, ctx());
    expect(await addressesOf(edge, "wan0")).toEqual(["10.100.1.3/24"]);
    expect((await addressesOf(edge, "lan0")).sort()).toEqual(["192.168.50.250/24", "192.168.60.1/24"]);
    expect(await mtuOf(edge, "lan0")).toBe(1500);
    expect(await routesOf(edge, "proto", "57")).toEqual([
      "default via 10.100.1.1 dev wan0 metric 7",
      "10.200.0.0/16 via 192.168.60.254 dev lan0 metric 0",
    ]);
    await driver.apply(A, ctx());
    expect(await routesOf(edge, "proto", "57")).toEqual([
      "default via 10.100.1.1 dev wan0 metric 5",
      "172.16.0.0/16 via 10.100.1.1 dev wan0 metric 10",
    ]);
    runner.takeMutating();
    await driver.apply(A, ctx());
    expect(runner.takeMutating()).toEqual([]);
  });

  it("an empty config removes exactly what the agent added", async () => {
    await driver.apply(EMPTY, ctx());
    expect(await addressesOf(edge, "wan0")).toEqual([]);
    expect(await addressesOf(edge, "lan0")).toEqual(["192.168.50.250/24"]);
    expect(await mtuOf(edge, "lan0")).toBe(1500);
    expect(await routesOf(edge, "proto", "57")).toEqual([]);
    expect(await routesOf(edge, "proto", "static")).toEqual(["10.99.0.0/16 dev lan0 metric 0"]);
    runner.takeMutating();
    expect(await driver.apply(EMPTY, ctx())).toEqual({ changed: false });
    expect(runner.takeMutating()).toEqual([]);
  });

  it("a DHCP WAN takes its address and default route from a real DHCP server, and lets go on teardown", async () => {
    const leases = join(root, "dnsmasq.leases");
    scope.spawn(wan, [
      "dnsmasq",
      "--conf-file=/dev/null",
      "--keep-in-foreground",
      "--port=0",
      "--interface=up0",
      "--bind-interfaces",
      "--dhcp-range=10.100.1.100,10.100.1.150,255.255.255.0,2m",
      "--dhcp-option=3,10.100.1.1",
      "--no-ping",
      `--dhcp-leasefile=${leases}`,
      `--pid-file=${join(root, "dnsmasq.pid")}`,
    ]);
    const paths = agentPaths(join(root, "state"), join(root, "run"));
    const reconciler = new Reconciler({
      drivers: [driver],
      context: ctx(),
      store: new StateStore(paths, silentLogger),
      log: silentLogger,
    });
    await reconciler.init();
    const dhcp = linksConfig([iface("wan0", { type: "WAN", dhcp: true, metric: 30 })]);
    expect(await reconciler.submit(dhcp, { source: "test" })).toMatchObject({ ok: true });
    // dhclient's lease arrives later; the driver's watch asks the loop to apply it.
    await Netns.waitFor(
      "a DHCP address on wan0",
      async () => (await addressesOf(edge, "wan0")).some((a) => a.startsWith("10.100.1.1")),
      20_000,
    );
    await Netns.waitFor("the DHCP default route", async () => (await routesOf(edge, "proto", "57")).length === 1, 10_000);
    expect(await routesOf(edge, "proto", "57")).toEqual(["default via 10.100.1.1 dev wan0 metric 30"]);
    const pid = Number((await readFile(join(root, "run", "links", "dhclient-wan0.pid"), "utf8")).trim());
    expect(pid).toBeGreaterThan(0);

    expect(await reconciler.submit(EMPTY, { source: "test" })).toMatchObject({ ok: true });
    expect(await addressesOf(edge, "wan0")).toEqual([]);
    expect(await routesOf(edge, "proto", "57")).toEqual([]);
    await Netns.waitFor("dhclient to exit", async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    await reconciler.idle();
  });
});
