import { afterEach, describe, expect, it } from "vitest";
import { KernelGate, PolicyDriver } from "../../../src/drivers/policy/index.ts";
import type { WanState } from "../../../src/kernel-events/index.ts";
import type { LinkQuality, LinkQualityLookup } from "../../../src/probes/index.ts";
import { fullConfig } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { FakeKernel } from "../../support/fake-kernel.ts";
import { FakeNft } from "../../support/fake-nft.ts";
import { FakeRunner } from "../../support/fake-runner.ts";

const q = (over: Partial<LinkQuality> = {}): LinkQuality => ({
  key: "",
  up: true,
  lossPercent: 0,
  rttMs: 5,
  srttMs: 5,
  jitterMs: 1,
  samples: 30,
  windowMs: 30_000,
  sent: 30,
  received: 30,
  target: "",
  sinceLastReplyMs: 0,
  ...over,
});
const wan = (ifname: string, carrier: boolean, address: string | null = "10.100.1.2"): WanState => ({ ifname, carrier, address });

describe("kernel gate", () => {
  it("blocks a WAN without carrier or address at once, and lets it back only after a probe answer that came after its return", () => {
    const g = new KernelGate();
    expect(g.blocked("wan0", q(), 0)).toBeNull();
    g.update(wan("wan0", false), 1000);
    expect(g.blocked("wan0", q(), 1000)).toBe("carrier lost (kernel)");
    expect(g.blocked("wan1", q(), 1000)).toBeNull();
    expect(g.blocked(null, q(), 1000)).toBeNull();
    g.update(wan("wan0", true), 2000);
    // The last answer is older than the return (now 2100, answered 300 ms ago = 1800).
    expect(g.blocked("wan0", q({ sinceLastReplyMs: 300 }), 2100)).toBe("back (kernel), waiting for a probe answer");
    expect(g.blocked("wan0", q({ sinceLastReplyMs: 50 }), 2100)).toBeNull();
    // Once confirmed, an old answer does not block again.
    expect(g.blocked("wan0", q({ sinceLastReplyMs: 5000 }), 9000)).toBeNull();
    g.update(wan("wan0", true, null), 9000);
    expect(g.blocked("wan0", q(), 9000)).toBe("no address (kernel)");
    // Nothing measures the link: nothing to wait for.
    g.update(wan("wan0", true), 9500);
    expect(g.blocked("wan0", null, 9600)).toBeNull();
    g.update(wan("wan1", false), 9700);
    g.retain(new Set(["wan0"]));
    expect(g.blocked("wan1", q(), 9800)).toBeNull();
  });
});

class FakeQuality implements LinkQualityLookup {
  readonly values = new Map<string, Partial<LinkQuality>>();
  quality(key: string): LinkQuality | null {
    const v = this.values.get(key);
    return v ? { ...q(), key, ...v } : null;
  }
  intervalMs() {
    return 20;
  }
}

describe("policy driver and the kernel's WAN events (fake runner)", () => {
  let ctx: DisposableContext;
  let driver: PolicyDriver;
  afterEach(async () => {
    await driver?.stop();
    await ctx?.dispose();
  });

  it("moves traffic off a WAN whose carrier dropped without waiting for a probe, and back only after probes confirm and the hold-down", async () => {
    const runner = new FakeRunner();
    const ip = new FakeKernel(runner, ["wan0", "wan1", "lan0"]);
    ip.addAddress("wan0", "10.100.1.2/24");
    ip.addAddress("wan1", "10.101.1.2/24");
    new FakeNft(runner);
    ctx = await testContext(runner);
    const quality = new FakeQuality();
    let clock = 0;
    // The loop never ticks in this test: only the kernel events move traffic.
    driver = new PolicyDriver({ quality, now: () => clock, loopMs: 3_600_000 });
    quality.values.set("wan:wan0", {});
    quality.values.set("wan:wan1", {});
    quality.values.set("tunnel:00000000-0000-4000-8000-000000000301", { up: false });
    quality.values.set("tunnel:00000000-0000-4000-8000-000000000302", { up: false });
    const cfg = fullConfig();
    cfg.policy!.rules[0]!.linkQuality!.holdDownSeconds = 5;
    await driver.apply(cfg, ctx);
    expect(ip.defaultRoute(30000)).toBe("via 10.100.1.1 dev wan0");

    // The probes still look perfect: only the kernel knows.
    clock = 1000;
    await driver.wanChanged([{ ifname: "wan0", before: wan("wan0", true), after: wan("wan0", false), seenAt: 1000 }]);
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
    expect(ctx.notes.at(-1)?.reason).toBe(
      "policy voip: wan:wan0 (carrier lost (kernel)) → wan:wan1 (loss 0%, rtt 5 ms, jitter 1 ms)",
    );

    // Carrier back at 2000, but the last probe answer is from before: traffic stays.
    clock = 2000;
    quality.values.set("wan:wan0", { sinceLastReplyMs: 1500 });
    await driver.wanChanged([{ ifname: "wan0", before: wan("wan0", false), after: wan("wan0", true), seenAt: 2000 }]);
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
    // An answer at 2500: eligible from then, back after the 5 s hold-down.
    clock = 2600;
    quality.values.set("wan:wan0", { sinceLastReplyMs: 100 });
    await driver.wanChanged([]);
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
    clock = 7700;
    await driver.wanChanged([]);
    expect(ip.defaultRoute(30000)).toBe("via 10.100.1.1 dev wan0");

    // The address goes: left at once as well.
    clock = 8000;
    await driver.wanChanged([{ ifname: "wan0", before: wan("wan0", true), after: wan("wan0", true, null), seenAt: 8000 }]);
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
  });
});
