/**
 * BGP driver against real FRR in throw-away namespaces: two edges whose WAN
 * addresses are two hops apart (a router between them). eBGP with
 * multiHop 1 never comes up (TTL 1 dies at the router); with 2 it is
 * Established. Each edge runs its own zebra + bgpd, as two agents would.
 */
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled, run } from "@tern/netlab";
import type { ConfigBgp } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BgpDriver } from "../../src/drivers/bgp/index.ts";
import { configWith } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { mutatingCommands } from "../support/mutating.ts";
import { NetnsRunner } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("bgp driver (FRR)", [
  "/usr/lib/frr/zebra",
  "/usr/lib/frr/bgpd",
  "vtysh",
  "/usr/lib/frr/frr-reload.py",
]);

function bgp(asn: number, routerId: string, peer: string, peerAsn: number, multiHop: number, networks: string[]): ConfigBgp {
  return {
    asn,
    routerId,
    keepalive: 3,
    hold: 9,
    neighbors: [{ ip: peer, remoteAsn: peerAsn, password: "md5-s3cret", multiHop, sendCommunity: false }],
    networks,
  };
}

describe.runIf(enabled)("bgp driver with real FRR in namespaces", () => {
  const scope = new NetnsScope("bgp");
  let dir: TempDirs;
  let nsA: Netns;
  let nsB: Netns;
  let ctxA: TestContext;
  let ctxB: TestContext;
  const driverA = new BgpDriver();
  const driverB = new BgpDriver();
  const configA = (mh: number) => configWith({ bgp: bgp(65001, "10.100.0.4", "10.100.2.2", 65002, mh, ["10.100.0.4/32"]) });
  const configB = (mh: number) => configWith({ bgp: bgp(65002, "10.100.0.5", "10.100.1.2", 65001, mh, ["10.100.0.5/32"]) });

  beforeAll(async () => {
    dir = await tempDirs("bgp");
    const r = await scope.netns("r");
    nsA = await scope.netns("a");
    nsB = await scope.netns("b");
    await scope.veth(nsA, "wan0", r, "toA");
    await scope.veth(nsB, "wan0", r, "toB");
    await r.addAddress("toA", "10.100.1.1/24");
    await r.addAddress("toB", "10.100.2.1/24");
    await r.sysctl("net.ipv4.ip_forward", "1");
    await nsA.addAddress("wan0", "10.100.1.2/24");
    await nsB.addAddress("wan0", "10.100.2.2/24");
    await nsA.addAddress("lo", "10.100.0.4/32");
    await nsB.addAddress("lo", "10.100.0.5/32");
    await nsA.exec(["ip", "route", "add", "default", "via", "10.100.1.1"]);
    await nsB.exec(["ip", "route", "add", "default", "via", "10.100.2.1"]);
    ctxA = driverContext(new NetnsRunner(nsA.name), join(dir.root, "a"));
    ctxB = driverContext(new NetnsRunner(nsB.name), join(dir.root, "b"));
  }, 30_000);

  afterAll(async () => {
    await driverA.apply(configWith({}), ctxA).catch(() => {});
    await driverB.apply(configWith({}), ctxB).catch(() => {});
    await scope.cleanup();
    await dir?.remove();
  }, 30_000);

  const stateA = async () => (await driverA.status(configA(2), ctxA))?.neighbors[0]?.state;

  it("with multiHop 1 the session to a peer two hops away never comes up", async () => {
    await driverB.apply(configB(1), ctxB);
    await driverA.apply(configA(1), ctxA);
    expect((await driverA.status(configA(1), ctxA))?.running).toBe(true);
    // Several connect-retry periods (5 s) would have passed for a reachable peer.
    const deadline = Date.now() + 7_000;
    while (Date.now() < deadline) {
      expect(await stateA()).not.toBe("Established");
      await new Promise((r) => setTimeout(r, 500));
    }
    const running = (
      await run(["ip", "netns", "exec", nsA.name, "vtysh", "--vty_socket", join(ctxA.runDir, "bgp"), "-c", "show running-config"])
    ).stdout;
    expect(running).not.toMatch(/ebgp-multihop/);
  }, 30_000);

  it("with multiHop 2 it is Established, with the password, and routes are exchanged", async () => {
    const t0 = performance.now();
    await driverB.apply(configB(2), ctxB);
    await driverA.apply(configA(2), ctxA);
    // A session the peer opened while this side still refused multihop can sit in OpenSent until its timer
    // expires (FRR), so this figure varies more than the fresh start below.
    await expect.poll(stateA, { timeout: 25_000, interval: 50 }).toBe("Established");
    console.log(
      `bgp: eBGP multihop Established ${(performance.now() - t0).toFixed(0)} ms after changing multiHop 1 → 2 on both edges (frr-reload)`,
    );
    const status = await driverA.status(configA(2), ctxA);
    expect(status).toMatchObject({ running: true, routerId: "10.100.0.4", localASN: 65001 });
    expect(status?.neighbors[0]).toMatchObject({ ip: "10.100.2.2", remoteASN: 65002 });
    await expect
      .poll(async () => (await nsB.exec(["ip", "-j", "route", "show", "10.100.0.4", "proto", "bgp"])).stdout, { timeout: 10_000 })
      .toMatch(/"dst":"10\.100\.0\.4"/);
    const zebra = (
      await run([
        "ip",
        "netns",
        "exec",
        nsA.name,
        "vtysh",
        "--vty_socket",
        join(ctxA.runDir, "bgp"),
        "-d",
        "zebra",
        "-c",
        "show running-config",
      ])
    ).stdout;
    expect(zebra).toMatch(/^ip nht resolve-via-default$/m);
    expect(zebra).not.toMatch(/^ip forwarding$/m);
  }, 40_000);

  it("a fresh start straight into multihop is Established quickly", async () => {
    await driverA.apply(configWith({}), ctxA);
    await driverB.apply(configWith({}), ctxB);
    const t0 = performance.now();
    await driverB.apply(configB(2), ctxB);
    await driverA.apply(configA(2), ctxA);
    const applied = performance.now();
    await expect.poll(stateA, { timeout: 20_000, interval: 25 }).toBe("Established");
    console.log(
      `bgp: from stopped to Established ${(performance.now() - t0).toFixed(0)} ms (both applies took ${(applied - t0).toFixed(0)} ms: zebra + bgpd start)`,
    );
  }, 40_000);

  it("re-applying the same config runs no mutating command", async () => {
    const runner = ctxA.runner as NetnsRunner;
    runner.clear();
    expect((await driverA.apply(configA(2), ctxA)).changed).toBe(false);
    expect(mutatingCommands(runner.calls)).toEqual([]);
  });

  it("observe() reports the protocol BgpState", async () => {
    await expect
      .poll(async () => (await driverA.observe(configA(2), ctxA)).bgp?.neighbors[0]?.prefixesReceived, { timeout: 10_000 })
      .toBe(1);
    // The count of prefixes sent follows FRR's update timer: on a loaded machine a moment after the received.
    await expect
      .poll(async () => (await driverA.observe(configA(2), ctxA)).bgp?.neighbors[0]?.prefixesSent ?? 0, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    const part = await driverA.observe(configA(2), ctxA);
    expect(part.bgp?.neighbors[0]?.state).toBe("Established");
    expect(part.bgp?.neighbors[0]?.prefixesSent).toBeGreaterThanOrEqual(1);
    expect(part.bgp?.neighbors[0]?.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  it("an empty section stops zebra and bgpd and removes the files", async () => {
    await driverA.apply(configWith({}), ctxA);
    expect((await run(["ip", "netns", "pids", nsA.name])).stdout.trim()).toBe("");
    expect((await driverA.status(configA(2), ctxA))?.running).toBe(false);
    const again = new NetnsRunner(nsA.name);
    expect((await driverA.apply(configWith({}), { ...ctxA, runner: again })).changed).toBe(false);
    expect(mutatingCommands(again.calls)).toEqual([]);
  }, 20_000);
});
