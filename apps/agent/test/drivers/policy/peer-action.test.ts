/**
 * The `peer` action (cloud security): internet-bound LAN traffic through the
 * device's tunnel to a peer. Plan, then a config sequence on the fake kernel:
 * the internet-only rule (main without its default route) sits ahead of the
 * rule's table, whose default route points at the tunnel's remote loopback.
 */
import type { DeviceConfig } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { PolicyDriver, wantedRules } from "../../../src/drivers/policy/index.ts";
import { ruleSlots } from "../../../src/drivers/policy/render.ts";
import type { LinkQualityLookup } from "../../../src/probes/index.ts";
import { emptyConfig, labConfig, tunnel, wan } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { FakeKernel } from "../../support/fake-kernel.ts";
import { FakeNft } from "../../support/fake-nft.ts";
import { FakeRunner } from "../../support/fake-runner.ts";

const PEER_TUNNEL = "00000000-0000-4000-8000-00000000c10d";
const noQuality: LinkQualityLookup = { quality: () => null, intervalMs: () => 1000 };

const cloudSecurity: DeviceConfig = labConfig((c) => {
  c.interfaces = [
    wan("wan0", "10.1.0.2/24", "10.1.0.1"),
    {
      devId: "dev:lan0",
      name: "lan0",
      type: "LAN",
      dhcp: false,
      address: "192.168.10.1/24",
      gateway: null,
      metric: 0,
      mtu: 1500,
      pathLabels: [],
    },
  ];
  c.tunnels = [
    tunnel({
      id: PEER_TUNNEL,
      num: 4,
      kind: "peer",
      localLoopback: "10.100.0.10",
      remoteLoopback: "10.100.0.11",
      internet: true,
      localSubnets: ["192.168.10.0/24"],
    }),
  ];
  c.policy = {
    rules: [
      {
        name: "lan-to-cloud-security",
        priority: 10,
        match: { source: "192.168.10.0/24", destination: "", protocol: "any", ports: "", dscp: null },
        order: "priority",
        pathLabels: [],
        tunnels: [PEER_TUNNEL],
        fallback: "drop",
        linkQuality: null,
      },
    ],
  };
});

describe("policy peer action (cloud security)", () => {
  let ctx: DisposableContext | undefined;
  let driver: PolicyDriver | undefined;
  afterEach(async () => {
    await driver?.stop();
    await ctx?.dispose();
  });

  it("plans the internet-only rule ahead of the table, and a default route via the peer tunnel", () => {
    expect(wantedRules(ruleSlots(cloudSecurity))).toEqual([
      { priority: 29745, mark: 0x10000, table: "main", suppressDefault: true },
      { priority: 30000, mark: 0x10000, table: 30000 },
    ]);
    const plan = new PolicyDriver({ quality: noQuality }).plan(cloudSecurity, {
      mode: "system",
      runDir: "/run/tern",
      stateDir: "/var/lib/tern",
    });
    expect(plan.commands.map((c) => c.join(" "))).toEqual([
      "nft -f /run/tern/policy/tern_policy.nft",
      "ip -4 rule add priority 29745 fwmark 0x10000/0xff0000 lookup main suppress_prefixlength 0",
      "ip -4 rule add priority 30000 fwmark 0x10000/0xff0000 lookup 30000",
      "ip route replace default via 10.100.0.11 table 30000",
    ]);
    expect(plan.files[0]?.content).toContain("ip saddr 192.168.10.0/24 meta mark set");
  });

  it("applies, is idempotent, and removes both rules on teardown", async () => {
    const runner = new FakeRunner();
    const kernel = new FakeKernel(runner, ["wan0", "lan0", "ipsec0"]);
    kernel.addAddress("wan0", "10.1.0.2/24");
    kernel.addAddress("lan0", "192.168.10.1/24");
    // The IKEv2 driver's route to the remote loopback makes it a usable next hop.
    await runner.run(["ip", "route", "replace", "10.100.0.11/32", "dev", "ipsec0", "table", "main", "proto", "58"]);
    new FakeNft(runner);
    ctx = await testContext(runner);
    driver = new PolicyDriver({ quality: noQuality, loopMs: 60_000 });

    expect(await driver.apply(cloudSecurity, ctx)).toEqual({ changed: true });
    expect(kernel.ownedRules()).toEqual(["29745 0x10000/0xff0000 main suppress 0", "30000 0x10000/0xff0000 30000"]);
    expect(kernel.defaultRoute(30000)).toBe("via 10.100.0.11 dev ipsec0");
    expect(driver.selections()).toEqual([
      expect.objectContaining({ rule: "lan-to-cloud-security", link: `tunnel:${PEER_TUNNEL}` }),
    ]);

    runner.clear();
    expect(await driver.apply(cloudSecurity, ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);

    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: true });
    expect(kernel.ownedRules()).toEqual([]);
    expect(kernel.defaultRoute(30000)).toBeNull();
  });
});
