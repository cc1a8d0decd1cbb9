import { afterEach, describe, expect, it } from "vitest";
import { probePlan, TunnelProber } from "../../src/probes/index.ts";
import type { Spawner } from "../../src/runner.ts";
import { fullConfig, variant } from "../support/configs.ts";

/** Records spawned argv and lets the test print lines as the process would. */
class FakeSpawner implements Spawner {
  readonly procs: { argv: string[]; onLine: (l: string) => void; stopped: boolean }[] = [];
  spawn(argv: string[], onLine: (l: string) => void) {
    const p = { argv, onLine, stopped: false };
    this.procs.push(p);
    return { stop: () => (p.stopped = true) };
  }
  live() {
    return this.procs.filter((p) => !p.stopped);
  }
}

describe("probe plan", () => {
  it("probes device tunnels with ICMP from the tunnel loopback to the far loopback (the far kernel answers), peers and WAN gateways too", () => {
    const plan = probePlan(fullConfig());
    expect(plan.targets).toEqual([
      { link: "tunnel:00000000-0000-4000-8000-000000000301", target: "10.100.0.5", method: "icmp", source: "10.100.0.4" },
      { link: "tunnel:00000000-0000-4000-8000-000000000302", target: "192.168.90.1", method: "icmp", source: "192.168.50.2" },
      { link: "wan:wan0", target: "10.100.1.1", method: "icmp", iface: "wan0" },
      { link: "wan:wan1", target: "10.101.1.1", method: "icmp", iface: "wan1" },
    ]);
    expect(plan.responderAddresses).toEqual(["10.100.0.4"]);
    expect(plan).toMatchObject({ intervalMs: 1000, timeoutMs: 1000, windowSize: 30, downAfterMs: 15000 });
  });
});

describe("TunnelProber", () => {
  let prober: TunnelProber | null = null;
  afterEach(() => prober?.stop());

  it("runs one fping per source, feeds windows and reports per tunnel", () => {
    const spawner = new FakeSpawner();
    prober = new TunnelProber({ spawner, port: 47656 });
    prober.configure(fullConfig());
    const argvs = spawner.live().map((p) => p.argv.join(" "));
    expect(argvs).toEqual([
      "fping -l -p 1000 -i 10 -t 1000 -B 1 -r 0 -S 10.100.0.4 10.100.0.5",
      "fping -l -p 1000 -i 10 -t 1000 -B 1 -r 0 -S 192.168.50.2 192.168.90.1",
      "fping -l -p 1000 -i 10 -t 1000 -B 1 -r 0 -I wan0 10.100.1.1",
      "fping -l -p 1000 -i 10 -t 1000 -B 1 -r 0 -I wan1 10.101.1.1",
    ]);
    const peer = spawner.live()[1]!;
    peer.onLine("192.168.90.1 : [0], 64 bytes, 10.0 ms (10.0 avg, 0% loss)");
    peer.onLine("192.168.90.1 : [1], timed out (10.0 avg, 50% loss)");
    peer.onLine("192.168.90.1 : [2], 64 bytes, 14.0 ms (12.0 avg, 33% loss)");
    peer.onLine("10.9.9.9 : [3], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    const report = prober.report();
    expect(report).toHaveLength(2);
    expect(report[1]).toEqual({
      id: "00000000-0000-4000-8000-000000000302",
      up: true,
      loss: 33.333,
      rtt: 12,
      // RFC 3550: one step of J += (|14 − 10| − J)/16 from 0
      jitter: 0.25,
      samples: 3,
      windowMs: expect.any(Number),
      sent: 3,
      received: 2,
    });
    // The device tunnel's remote loopback does not exist here: no answers, down.
    expect(report[0]).toMatchObject({ id: "00000000-0000-4000-8000-000000000301", up: false });
    expect(prober.quality("wan:wan0")).toMatchObject({ up: false, samples: 0, target: "10.100.1.1" });
    expect(prober.quality("wan:nope")).toBeNull();
  });

  it("does not count probes before a target's first answer as loss (the tunnel was being set up), but keeps them in the raw counts", () => {
    const spawner = new FakeSpawner();
    prober = new TunnelProber({ spawner, port: 47658 });
    prober.configure(fullConfig());
    const tunnelProbe = spawner.live()[0]!;
    tunnelProbe.onLine("10.100.0.5 : [0], timed out (NaN avg, 100% loss)");
    tunnelProbe.onLine("10.100.0.5 : [1], timed out (NaN avg, 100% loss)");
    tunnelProbe.onLine("10.100.0.5 : [2], 64 bytes, 2.0 ms (2.0 avg, 66% loss)");
    tunnelProbe.onLine("10.100.0.5 : [3], 64 bytes, 2.0 ms (2.0 avg, 50% loss)");
    expect(prober.report()[0]).toMatchObject({ up: true, loss: 0, samples: 2, sent: 4, received: 2 });
    // Loss after that is loss.
    tunnelProbe.onLine("10.100.0.5 : [4], timed out (2.0 avg, 60% loss)");
    expect(prober.report()[0]).toMatchObject({ loss: 33.333, samples: 3, sent: 5, received: 2 });
  });

  it("gives the policy driver the newest 30 s of probes, the status report the whole window", () => {
    const spawner = new FakeSpawner();
    prober = new TunnelProber({ spawner, port: 47659 });
    prober.configure(variant(fullConfig(), (c) => (c.monitoring.windowSize = 100)));
    const wan0 = spawner.live()[2]!;
    wan0.onLine("10.100.1.1 : [0], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    for (let i = 1; i <= 60; i++) wan0.onLine(`10.100.1.1 : [${i}], timed out (1.0 avg, 50% loss)`);
    for (let i = 61; i <= 90; i++) wan0.onLine(`10.100.1.1 : [${i}], 64 bytes, 1.0 ms (1.0 avg, 40% loss)`);
    // one probe a second: the newest 30 probes are the last 30 s, all answered
    expect(prober.quality("wan:wan0")).toMatchObject({ samples: 30, lossPercent: 0 });
    expect(prober.windowQuality("wan:wan0")).toMatchObject({ samples: 91, lossPercent: 65.934 });
  });

  it("keeps unchanged sessions and their windows across configure(), restarts changed ones", () => {
    const spawner = new FakeSpawner();
    prober = new TunnelProber({ spawner, port: 47657 });
    const a = fullConfig();
    prober.configure(a);
    spawner.live()[2]!.onLine("10.100.1.1 : [0], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    const b = variant(a, (c) => {
      c.interfaces[1]!.gateway = "10.101.1.254";
    });
    prober.configure(b);
    expect(spawner.procs).toHaveLength(5);
    expect(spawner.live().map((p) => p.argv.at(-1))).toEqual(["10.100.0.5", "192.168.90.1", "10.100.1.1", "10.101.1.254"]);
    expect(prober.quality("wan:wan0")?.samples).toBe(1);
    prober.configure(variant(a, (c) => (c.monitoring.probeIntervalMs = 500)));
    expect(spawner.live().every((p) => p.argv.includes("500"))).toBe(true);
  });
});

describe("fping gaps", () => {
  it("counts probes fping never reported (send errors) as lost", async () => {
    const { FpingSession } = await import("../../src/probes/index.ts");
    const spawner = new FakeSpawner();
    const results: [number, number | null][] = [];
    const s = new FpingSession(spawner, { iface: "wan0" }, ["10.0.0.1"], {
      intervalMs: 100,
      timeoutMs: 200,
      onResult: (_t, seq, rtt) => results.push([seq, rtt]),
    });
    s.start();
    const line = spawner.live()[0]!.onLine;
    line("10.0.0.1 : [0], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    line("10.0.0.1 : [2], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    expect(results).toEqual([
      [0, 1],
      [2, 1],
    ]);
    line("10.0.0.1 : [5], 64 bytes, 1.0 ms (1.0 avg, 0% loss)");
    expect(results.slice(2)).toEqual([
      [5, 1],
      [1, null],
    ]);
    line("10.0.0.1 : [8], timed out (1.0 avg, 30% loss)");
    expect(results.slice(4)).toEqual([
      [8, null],
      [3, null],
      [4, null],
      [6, null],
      [7, null],
    ]);
    s.stop();
  });
});
