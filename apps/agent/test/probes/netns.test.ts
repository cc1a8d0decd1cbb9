/**
 * Probe accuracy against impairment added with nft in throw-away namespaces:
 *
 *   a (lo 10.200.0.4, tun0 10.100.0.4) ──veth── (tun0 10.100.0.5, lo 10.200.0.5) b
 *
 * `a` probes `b`'s tunnel loopback (10.200.0.5, routed over tun0 from a's
 * loopback: a device tunnel) and `b`'s link address (a WAN gateway probe),
 * both with ICMP echo that `b`'s kernel answers. nft in `b` drops 5 % of each
 * with a named counter, so the measured loss can be compared with what the
 * kernel really dropped: the two must agree exactly.
 */
import { Netns, NetnsScope, privilegedTestsEnabled } from "@tern/netlab";
import type { TunnelReport } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LinkQuality } from "../../src/probes/index.ts";
import { labConfig, tunnel, wan } from "../support/configs.ts";
import { NsAgent } from "../support/ns-agent-client.ts";

const enabled = privilegedTestsEnabled("probes netns test", ["nft", "fping"]);
type Report = { tunnels: TunnelReport[]; details: (LinkQuality & { answered: number; lost: number })[]; at: number };

describe.runIf(enabled)("tunnel probes in namespaces", () => {
  const scope = new NetnsScope("probe");
  let a: Netns;
  let b: Netns;
  let agentA: NsAgent;
  let agentB: NsAgent | null;
  const monitoring = { probeIntervalMs: 20, windowSize: 600, downAfterMs: 1500, statusIntervalMs: 5000 };
  const configA = labConfig((c) => {
    c.monitoring = monitoring;
    c.interfaces = [wan("tun0", "10.100.0.4/31", "10.100.0.5", ["lbl"])];
    c.tunnels = [tunnel({ id: "t1", localLoopback: "10.200.0.4", remoteLoopback: "10.200.0.5", probeTargets: ["10.200.0.5"] })];
  });
  const configB = labConfig((c) => {
    c.monitoring = monitoring;
    c.tunnels = [tunnel({ id: "t1", localLoopback: "10.200.0.5", remoteLoopback: "10.200.0.4", probeTargets: [] })];
  });

  beforeAll(async () => {
    a = await scope.netns("a");
    b = await scope.netns("b");
    await scope.veth(a, "tun0", b, "tun0");
    await a.addAddress("tun0", "10.100.0.4/31");
    await b.addAddress("tun0", "10.100.0.5/31");
    // The tunnel loopbacks, routed to each other as the IKEv2 driver routes them over its tunnel device.
    await a.addAddress("lo", "10.200.0.4/32");
    await b.addAddress("lo", "10.200.0.5/32");
    await a.exec(["ip", "route", "add", "10.200.0.5/32", "dev", "tun0", "src", "10.200.0.4"]);
    await b.exec(["ip", "route", "add", "10.200.0.4/32", "dev", "tun0", "src", "10.200.0.5"]);
    agentA = new NsAgent(a.name);
    agentB = new NsAgent(b.name);
  }, 30_000);

  afterAll(async () => {
    await agentA?.stop();
    await agentB?.stop();
    await scope.cleanup();
  });

  it("measures loss exactly as the kernel dropped it (tunnel and WAN ICMP probes), with RTT and jitter", async () => {
    // Loss on the wire: b's kernel drops 5 % of the probes arriving from a.
    await b.exec(["nft", "-f", "-"], {
      input: `table inet impair {
        counter tunneldrops {}
        counter icmpdrops {}
        chain in {
          type filter hook input priority 0; policy accept;
          iifname "tun0" ip daddr 10.200.0.5 icmp type echo-request numgen random mod 100 < 5 counter name "tunneldrops" drop
          iifname "tun0" ip daddr 10.100.0.5 icmp type echo-request numgen random mod 100 < 5 counter name "icmpdrops" drop
        }
      }`,
    });
    await agentB!.call("configure", { config: configB });
    await agentA.call("configure", { config: configA });
    await Netns.waitFor(
      "600 finalised probes of each kind",
      async () => {
        const r = await agentA.call<Report>("report");
        return r.details.length === 2 && r.details.every((d) => d.answered + d.lost >= 600);
      },
      60_000,
      500,
    );
    await b.exec(["nft", "flush", "chain", "inet", "impair", "in"]);
    // Every probe still in flight either comes back or times out (1 s) as lost.
    await new Promise((r) => setTimeout(r, 1500));
    const r = await agentA.call<Report>("report");
    const counters = (await b.exec(["nft", "-j", "list", "counters", "table", "inet", "impair"])).stdout;
    const dropped = (name: string) => {
      const all = JSON.parse(counters).nftables as { counter?: { name: string; packets: number } }[];
      return all.find((x) => x.counter?.name === name)!.counter!.packets;
    };
    const tun = r.details.find((d) => d.key === "tunnel:t1")!;
    const icmp = r.details.find((d) => d.key === "wan:tun0")!;
    for (const [name, d, drops] of [
      ["tunnel probe (ICMP to the far loopback)", tun, dropped("tunneldrops")],
      ["WAN gateway probe (ICMP)", icmp, dropped("icmpdrops")],
    ] as const) {
      const total = d.answered + d.lost;
      console.log(
        `${name}: ${total} probes, kernel dropped ${drops} (${((drops / total) * 100).toFixed(2)} %), measured lost ${d.lost}; ` +
          `window of ${d.samples}: loss ${d.lossPercent} %, rtt ${d.rttMs} ms (srtt ${d.srttMs} ms), jitter ${d.jitterMs} ms`,
      );
      expect(d.lost).toBe(drops);
      // 5 % over 600+ probes: the binomial spread is ±0.9 points, so ±4 points cannot fail by chance.
      expect(Math.abs((d.lost / total) * 100 - 5)).toBeLessThan(4);
      expect(d.rttMs).toBeGreaterThan(0);
      expect(d.rttMs).toBeLessThan(20);
    }
    const report = r.tunnels.find((t) => t.id === "t1")!;
    expect(report).toMatchObject({ id: "t1", up: true, samples: 600 });
    expect(report.loss).toBe(tun.lossPercent);
    expect(report.jitter).toBe(tun.jitterMs);
    // The raw counts behind the figures travel with the report.
    expect(report.sent).toBe(tun.answered + tun.lost);
    expect(report.received).toBe(tun.answered);
    expect(report.windowMs).toBeGreaterThanOrEqual(600 * 20 * 0.9);
  }, 90_000);

  it("keeps the tunnel up while the far agent is gone (its kernel answers), down after downAfterMs when the path drops", async () => {
    await agentB?.stop();
    agentB = null;
    await new Promise((r) => setTimeout(r, 2500));
    const meanwhile = await agentA.call<Report>("report");
    expect(meanwhile.tunnels[0]!.up).toBe(true);
    expect(meanwhile.details.find((d) => d.key === "tunnel:t1")!.sinceLastReplyMs).toBeLessThan(500);
    await b.exec(["nft", "add", "rule", "inet", "impair", "in", "ip", "daddr", "10.200.0.5", "drop"]);
    const droppedAt = Date.now();
    await Netns.waitFor("tunnel down", async () => !(await agentA.call<Report>("report")).tunnels[0]!.up, 10_000, 50);
    const downAfter = Date.now() - droppedAt;
    console.log(`tunnel reported down ${downAfter} ms after the path stopped answering (downAfterMs 1500)`);
    expect(downAfter).toBeGreaterThanOrEqual(1400);
    await b.exec(["nft", "flush", "chain", "inet", "impair", "in"]);
    await Netns.waitFor("tunnel up again", async () => (await agentA.call<Report>("report")).tunnels[0]!.up, 10_000, 50);
  }, 30_000);
});
