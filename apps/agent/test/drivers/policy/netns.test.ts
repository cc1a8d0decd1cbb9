/**
 * link-quality failover and recovery on a real kernel:
 *
 *   host (192.168.50.10) ── lan0 [rtr] wan0 ── isp1 (10.1.0.1, lo 203.0.113.10)
 *                                   wan1 ── isp2 (10.2.0.1, lo 203.0.113.10)
 *
 * Both ISPs own the destination 203.0.113.10, so a counter on each tells
 * which path a burst of the rule's traffic (UDP 5060 from the host) took.
 * The agent (prober + policy driver) runs inside `rtr`; loss is injected in
 * isp1 with nft (50 % of the echo requests to the gateway).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import type { DeviceConfig } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labConfig, wan } from "../../support/configs.ts";
import { NsAgent } from "../../support/ns-agent-client.ts";

const enabled = privilegedTestsEnabled("policy netns test", ["nft", "fping"]);
const L1 = "00000000-0000-4000-8000-000000000501";
const L2 = "00000000-0000-4000-8000-000000000502";
type PolicyState = {
  selections: { rule: string; link: string | null; reason: string }[];
  events: { at: number; reason: string }[];
  at: number;
};

describe.runIf(enabled)("policy driver failover in namespaces", () => {
  const scope = new NetnsScope("pol");
  const runDir = mkdtempSync(join(tmpdir(), "tern-pol-"));
  let rtr: Netns;
  let host: Netns;
  let isp1: Netns;
  let isp2: Netns;
  let agent: NsAgent;
  const config: DeviceConfig = labConfig((c) => {
    c.monitoring = { probeIntervalMs: 100, windowSize: 20, downAfterMs: 3000, statusIntervalMs: 5000 };
    c.interfaces = [
      wan("wan0", "10.1.0.2/24", "10.1.0.1", [L1]),
      wan("wan1", "10.2.0.2/24", "10.2.0.1", [L2]),
      {
        devId: "dev:lan0",
        name: "lan0",
        type: "LAN",
        dhcp: false,
        address: "192.168.50.1/24",
        gateway: null,
        metric: 0,
        mtu: 1500,
        pathLabels: [],
      },
    ];
    c.policy = {
      rules: [
        {
          name: "voip",
          priority: 1,
          match: { source: "", destination: "", protocol: "udp", ports: "5060", dscp: null },
          order: "link-quality",
          pathLabels: [L1, L2],
          fallback: "by-destination",
          linkQuality: { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 3 },
        },
      ],
    };
  });

  /** Sends 10 UDP packets to 203.0.113.10:5060 (and 10 to :9999, not matched) and says which ISP got the 5060 ones. */
  async function burst(): Promise<{ isp1: number; isp2: number }> {
    const before = await Promise.all([isp1, isp2].map(counter));
    await host.exec([
      process.execPath,
      "-e",
      `const s=require("dgram").createSocket("udp4");let n=0;const t=setInterval(()=>{s.send("x",5060,"203.0.113.10");s.send("y",9999,"203.0.113.10");if(++n===10){clearInterval(t);setTimeout(()=>s.close(),50)}},5)`,
    ]);
    await new Promise((r) => setTimeout(r, 100));
    const after = await Promise.all([isp1, isp2].map(counter));
    return { isp1: after[0]! - before[0]!, isp2: after[1]! - before[1]! };
  }
  async function counter(ns: Netns): Promise<number> {
    const out = (await ns.exec(["nft", "-j", "list", "counter", "inet", "watch", "sip"])).stdout;
    return (JSON.parse(out).nftables as { counter?: { packets: number } }[]).find((x) => x.counter)!.counter!.packets;
  }

  beforeAll(async () => {
    [rtr, host, isp1, isp2] = (await Promise.all(["rtr", "host", "isp1", "isp2"].map((n) => scope.netns(n)))) as [
      Netns,
      Netns,
      Netns,
      Netns,
    ];
    await scope.veth(rtr, "lan0", host, "eth0");
    await scope.veth(rtr, "wan0", isp1, "eth0");
    await scope.veth(rtr, "wan1", isp2, "eth0");
    await rtr.addAddress("lan0", "192.168.50.1/24");
    await rtr.addAddress("wan0", "10.1.0.2/24");
    await rtr.addAddress("wan1", "10.2.0.2/24");
    await host.addAddress("eth0", "192.168.50.10/24");
    await host.exec(["ip", "route", "add", "default", "via", "192.168.50.1"]);
    await rtr.sysctl("net.ipv4.ip_forward", "1");
    await rtr.exec(["ip", "route", "add", "default", "via", "10.1.0.1", "dev", "wan0"]);
    for (const [ns, addr] of [
      [isp1, "10.1.0.1/24"],
      [isp2, "10.2.0.1/24"],
    ] as const) {
      await ns.addAddress("eth0", addr);
      await ns.addAddress("lo", "203.0.113.10/32");
      await ns.exec(["nft", "-f", "-"], {
        input: `table inet watch {
          counter sip {}
          chain in { type filter hook input priority 0; policy accept; udp dport 5060 counter name "sip"; }
        }`,
      });
    }
    agent = new NsAgent(rtr.name, { TERN_RUN_DIR: runDir });
  }, 30_000);

  afterAll(async () => {
    await agent?.stop();
    await scope.cleanup();
    rmSync(runDir, { recursive: true, force: true });
  });

  it("moves matching traffic to wan1 when wan0 loses probes, and back after recovery plus hold-down", async () => {
    await agent.call("configure", { config });
    expect(await agent.call("policy-apply", { config })).toEqual({ changed: true });
    expect((await rtr.exec(["ip", "rule", "show", "priority", "30000"])).stdout).toContain(
      "fwmark 0x10000/0xff0000 lookup 30000",
    );
    expect((await rtr.exec(["ip", "route", "show", "table", "30000"])).stdout).toContain("default via 10.1.0.1 dev wan0");
    expect(await agent.call("policy-apply", { config })).toEqual({ changed: false });
    expect(await burst()).toEqual({ isp1: 10, isp2: 0 });

    // Let wan0 collect clean samples, then impair it.
    await new Promise((r) => setTimeout(r, 1500));
    await isp1.exec(["nft", "-f", "-"], {
      input: `table inet impair {
        chain lossy {
          type filter hook input priority 0; policy accept;
          iifname "eth0" icmp type echo-request numgen random mod 100 < 50 drop
        }
      }`,
    });
    const impairedAt = Date.now();
    await Netns.waitFor(
      "voip on wan1",
      async () => (await agent.call<PolicyState>("policy-state")).selections[0]?.link === "wan:wan1",
      20_000,
      50,
    );
    const movedAfter = Date.now() - impairedAt;
    expect((await rtr.exec(["ip", "route", "show", "table", "30000"])).stdout).toContain("default via 10.2.0.1 dev wan1");
    expect(await burst()).toEqual({ isp1: 0, isp2: 10 });

    await isp1.exec(["nft", "delete", "table", "inet", "impair"]);
    const recoveredAt = Date.now();
    await Netns.waitFor(
      "voip back on wan0",
      async () => (await agent.call<PolicyState>("policy-state")).selections[0]?.link === "wan:wan0",
      30_000,
      50,
    );
    const backAfter = Date.now() - recoveredAt;
    expect(await burst()).toEqual({ isp1: 10, isp2: 0 });
    const state = await agent.call<PolicyState>("policy-state");
    console.log(
      `policy failover: moved to wan1 ${movedAfter} ms after 50 % loss began on wan0 (probe 100 ms, window 20, loss timeout 1 s); ` +
        `back on wan0 ${backAfter} ms after the loss stopped (window refill ~2 s + hold-down 3 s)\n` +
        state.events.map((e) => `  +${e.at} ms ${e.reason}`).join("\n"),
    );
    // Hysteresis: wan0 cannot have been eligible before the loss stopped, so moving back takes at least the hold-down.
    expect(backAfter).toBeGreaterThanOrEqual(3000);
    expect(state.events.map((e) => e.reason.split(":")[0])).toEqual(["policy voip", "policy voip"]);
  }, 90_000);

  it("tears down its rules, tables and nft table on an empty policy", async () => {
    const empty = labConfig((c) => (c.interfaces = config.interfaces));
    expect(await agent.call("policy-apply", { config: empty })).toEqual({ changed: true });
    expect((await rtr.exec(["ip", "rule", "show"])).stdout).not.toContain("30000");
    expect((await rtr.exec(["ip", "route", "show", "table", "30000"], { allowFailure: true })).stdout.trim()).toBe("");
    expect((await rtr.exec(["nft", "list", "tables"])).stdout).not.toContain("tern_policy");
    // Back on the main table: by destination via wan0.
    expect(await burst()).toEqual({ isp1: 10, isp2: 0 });
  }, 30_000);
});
