/**
 * The agent's reaction to the kernel's WAN events (kernel-events/): the
 * policy driver first and alone, then the others; a status at once; a driver
 * that fails is recorded, not thrown; the watcher follows the applied config
 * and is closed with the agent.
 */
import type { DeviceConfig } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { WanWatch } from "../../src/daemon/agent.ts";
import type { WanChange } from "../../src/kernel-events/index.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { iface, linksConfig } from "../support/configs.ts";
import { TestDriver } from "../support/test-driver.ts";

class FakeWans implements WanWatch {
  configured: string[][] = [];
  closed = 0;
  private listener: ((c: WanChange[]) => void | Promise<void>) | null = null;
  configure(config: DeviceConfig): void {
    this.configured.push(config.interfaces.filter((i) => i.type === "WAN").map((i) => i.name));
  }
  onChange(l: (c: WanChange[]) => void | Promise<void>): void {
    this.listener = l;
  }
  async emit(c: WanChange[]): Promise<void> {
    await this.listener?.(c);
  }
  close(): void {
    this.closed++;
  }
}

const log: string[] = [];
class ReactingDriver extends TestDriver {
  constructor(
    name: "policy" | "ikev2" | "links",
    private readonly ms: number,
    private readonly fail = false,
  ) {
    super(name);
  }
  async wanChanged(changes: readonly WanChange[]): Promise<void> {
    log.push(`${this.name} start ${changes.map((c) => c.ifname).join(",")}`);
    await new Promise((r) => setTimeout(r, this.ms));
    if (this.fail) throw new Error(`${this.name} could not react`);
    log.push(`${this.name} done`);
  }
}

const CONFIG = linksConfig([
  iface("wan0", { type: "WAN", address: "10.0.0.2/24" }),
  iface("lan0", { address: "192.168.50.1/24" }),
]);
const change = (ifname: string): WanChange => ({
  ifname,
  before: { ifname, carrier: true, address: "10.0.0.2" },
  after: { ifname, carrier: false, address: "10.0.0.2" },
  seenAt: performance.now(),
});

describe("agent and the kernel's WAN events", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    h = null;
    log.length = 0;
  });

  it("lets the policy react first and alone, then the others, pushes a status at once, records a failing driver", async () => {
    const wans = new FakeWans();
    const drivers = [new ReactingDriver("links", 5, true), new ReactingDriver("ikev2", 5), new ReactingDriver("policy", 40)];
    h = await startAgent(null, { drivers, wans });
    await h.agent.apply(CONFIG, "test");
    await expect.poll(() => wans.configured).toEqual([["wan0"]]);
    // Past the apply's own status (100 ms debounce): the next one can only come from the WAN change.
    await new Promise((r) => setTimeout(r, 300));
    const before = h.agent.snapshot().status;

    await wans.emit([change("wan0")]);
    expect(log.slice(0, 2)).toEqual(["policy start wan0", "policy done"]);
    expect(log.slice(2).sort()).toEqual(["ikev2 done", "ikev2 start wan0", "links start wan0"]);
    // The status went out without waiting for the tick (statusIntervalMs is long in the harness).
    await expect.poll(() => h?.agent.snapshot().status !== before, { timeout: 2000 }).toBe(true);
    expect(h.agent.snapshot().recentErrors.map((e) => [e.source, e.message])).toContainEqual(["kernel", "links could not react"]);

    const agent = h;
    h = null;
    await agent.stop();
    expect(wans.closed).toBe(1);
  });

  it("ignores WAN events before any config is applied", async () => {
    const wans = new FakeWans();
    h = await startAgent(null, { drivers: [new ReactingDriver("policy", 1)], wans });
    await wans.emit([change("wan0")]);
    expect(log).toEqual([]);
  });
});
