import { afterEach, describe, expect, it } from "vitest";
import { PolicyDriver } from "../../../src/drivers/policy/index.ts";
import type { LinkQuality, LinkQualityLookup } from "../../../src/probes/index.ts";
import { emptyConfig, fullConfig, variant } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { FakeKernel } from "../../support/fake-kernel.ts";
import { FakeNft } from "../../support/fake-nft.ts";
import { FakeRunner } from "../../support/fake-runner.ts";

/** The full sample's WANs, addressed as the links driver leaves them. */
function router(runner: FakeRunner): FakeKernel {
  const kernel = new FakeKernel(runner, ["wan0", "wan1", "lan0"]);
  kernel.addAddress("wan0", "10.100.1.2/24");
  kernel.addAddress("wan1", "10.101.1.2/24");
  kernel.addAddress("lan0", "192.168.50.2/24");
  return kernel;
}

class FakeQuality implements LinkQualityLookup {
  readonly values = new Map<string, Partial<LinkQuality>>();
  quality(key: string): LinkQuality | null {
    const v = this.values.get(key);
    if (!v) return null;
    return {
      key,
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
      ...v,
    };
  }
  intervalMs() {
    return 20;
  }
}

const full = fullConfig();
const withSecondRule = variant(full, (c) => {
  c.policy!.rules.push({
    name: "backup-only",
    priority: 0,
    match: { source: "192.168.50.0/25", destination: "", protocol: "any", ports: "", dscp: 46 },
    order: "priority",
    pathLabels: ["00000000-0000-4000-8000-000000000502"],
    fallback: "drop",
    linkQuality: null,
  });
});

describe("policy driver render", () => {
  it("renders the marking table and plan for the full sample (golden)", async () => {
    const d = new PolicyDriver({ quality: new FakeQuality() });
    await expect(d.render(withSecondRule)).toMatchFileSnapshot("./golden/two-rules.nft");
    const plan = d.plan(withSecondRule, { mode: "system", runDir: "/run/tern", stateDir: "/var/lib/tern" });
    expect(plan.commands.map((c) => c.join(" "))).toEqual([
      "nft -f /run/tern/policy/tern_policy.nft",
      "ip -4 rule add priority 30000 fwmark 0x10000/0xff0000 lookup 30000",
      "ip route replace default via 10.101.1.1 dev wan1 table 30000",
      "ip -4 rule add priority 30001 fwmark 0x20000/0xff0000 lookup 30001",
      "ip route replace default via 10.100.1.1 dev wan0 table 30001",
    ]);
    expect(d.render(emptyConfig())).toBeNull();
  });
});

describe("policy driver config sequence (fake runner)", () => {
  let ctx: DisposableContext;
  let driver: PolicyDriver;
  afterEach(async () => {
    await driver?.stop();
    await ctx?.dispose();
  });

  it("A → A → B → A → empty: only differences mutate; teardown removes only its own rules and tables", async () => {
    const runner = new FakeRunner();
    const ip = router(runner);
    const nft = new FakeNft(runner);
    ctx = await testContext(runner);
    driver = new PolicyDriver({ quality: new FakeQuality(), loopMs: 60_000 });

    expect(await driver.apply(full, ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual([
      `nft -f ${ctx.runDir}/policy/tern_policy.nft`,
      "ip -4 rule add priority 30000 fwmark 0x10000/0xff0000 lookup 30000",
      "ip route replace default via 10.100.1.1 dev wan0 table 30000",
    ]);

    runner.clear();
    expect(await driver.apply(full, ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);

    runner.clear();
    expect(await driver.apply(withSecondRule, ctx)).toEqual({ changed: true });
    expect(ip.ownedRules()).toEqual(["30000 0x10000/0xff0000 30000", "30001 0x20000/0xff0000 30001"]);
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
    expect(ip.defaultRoute(30001)).toBe("via 10.100.1.1 dev wan0");

    runner.clear();
    expect(await driver.apply(full, ctx)).toEqual({ changed: true });
    expect(ip.ownedRules()).toEqual(["30000 0x10000/0xff0000 30000"]);
    expect(ip.defaultRoute(30000)).toBe("via 10.100.1.1 dev wan0");
    expect(ip.defaultRoute(30001)).toBeNull();

    runner.clear();
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: true });
    expect(ip.ownedRules()).toEqual([]);
    expect(ip.rules.map((r) => r.priority)).toEqual([0, 220, 32766, 32767]);
    expect(ip.routes.filter((r) => r.table !== "main")).toEqual([]);
    expect(nft.tables.has("inet tern_policy")).toBe(false);
    runner.clear();
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);
  });

  it("the loop moves traffic when quality changes, notifies, and honours the hold-down", async () => {
    const runner = new FakeRunner();
    const ip = router(runner);
    new FakeNft(runner);
    ctx = await testContext(runner);
    const quality = new FakeQuality();
    let clock = 0;
    const cfg = variant(full, (c) => (c.policy!.rules[0]!.linkQuality!.holdDownSeconds = 5));
    driver = new PolicyDriver({ quality, now: () => clock, loopMs: 10 });
    quality.values.set("wan:wan0", {});
    quality.values.set("wan:wan1", {});
    // The tunnels carry the same labels (after the WANs in config order): keep them out of this story.
    quality.values.set("tunnel:00000000-0000-4000-8000-000000000301", { up: false });
    quality.values.set("tunnel:00000000-0000-4000-8000-000000000302", { up: false });
    await driver.apply(cfg, ctx);
    expect(ip.defaultRoute(30000)).toBe("via 10.100.1.1 dev wan0");

    quality.values.set("wan:wan0", { lossPercent: 20 });
    clock = 1000;
    await waitFor(() => ip.defaultRoute(30000) === "via 10.101.1.1 dev wan1");
    expect(ctx.notes.at(-1)?.reason).toBe("policy voip: wan:wan0 (loss 20% > 2%) → wan:wan1 (loss 0%, rtt 5 ms, jitter 1 ms)");

    quality.values.set("wan:wan0", {});
    clock = 2000;
    await new Promise((r) => setTimeout(r, 50));
    expect(ip.defaultRoute(30000)).toBe("via 10.101.1.1 dev wan1");
    clock = 7000;
    await waitFor(() => ip.defaultRoute(30000) === "via 10.100.1.1 dev wan0");
    expect(ctx.notes).toHaveLength(2);

    // Both links fail: by-destination fallback empties the table (lookups fall through to main).
    quality.values.set("wan:wan0", { up: false });
    quality.values.set("wan:wan1", { up: false });
    clock = 8000;
    await waitFor(() => ip.defaultRoute(30000) === null);
    expect(driver.selections()).toEqual([{ rule: "voip", link: null, reason: "wan:wan0 (down) → fallback (no eligible link)" }]);
  });
});

async function waitFor(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
