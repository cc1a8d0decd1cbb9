/**
 * The running agent's own wiring (no server): the tunnel source is configured
 * with each applied config and at start, driver details reach the snapshot,
 * the troubleshooting page is served over the agent's own state, and
 * stopping closes every driver and the tunnel source while the router stays
 * configured.
 */

import { configHash } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { DriverDetails, StatusPart } from "../../src/drivers/driver.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { iface, linksConfig } from "../support/configs.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";
import { deferred, TestDriver } from "../support/test-driver.ts";

class ClosingDriver extends TestDriver {
  closed = 0;
  async close(): Promise<void> {
    this.closed += 1;
  }
  async inspect(): Promise<DriverDetails> {
    return { lines: [`applied ${this.applied.length}`], data: this.applied.length };
  }
}

const A = linksConfig([iface("lan0", { address: "192.168.50.1/24" })]);

describe("agent lifecycle", () => {
  let h: Harness | null = null;
  let dirs: TempDirs | null = null;
  afterEach(async () => {
    await h?.stop();
    await dirs?.remove();
    h = null;
    dirs = null;
  });

  it("configures the tunnel source after each apply and at start; closes drivers and probes on stop", async () => {
    dirs = await tempDirs("lifecycle");
    const links = new ClosingDriver("links");
    const policy = new ClosingDriver("policy");
    h = await startAgent(null, { drivers: [links, policy], dirs });
    await h.agent.apply(A, "test");
    await expect.poll(() => h?.tunnels.configured.length).toBe(1);
    await h.agent.refresh();
    expect(h.agent.snapshot().driverDetails).toEqual({
      links: { lines: ["applied 1"], data: 1 },
      policy: { lines: ["applied 1"], data: 1 },
    });
    const first = h;
    await first.agent.stop();
    expect([links.closed, policy.closed, first.tunnels.closed]).toEqual([1, 1, 1]);

    // A restart re-applies the last good config and configures the probes with it before anything else.
    const again = new ClosingDriver("links");
    h = await startAgent(null, { drivers: [again], dirs, sys: new FakeSystem() });
    expect(again.applied).toHaveLength(1);
    await expect.poll(() => h?.tunnels.configured).toEqual([[]]);
  });

  it("serves the troubleshooting page over its own snapshot, protected by the secret in the state dir", async () => {
    h = await startAgent(null, { ui: { host: "127.0.0.1", port: 0 } });
    await h.agent.apply(A, "test");
    const ui = h.agent.snapshot().ui;
    expect(ui?.secretFile).toBe(`${h.dirs.stateDir}/ui-secret`);
    const { readFile } = await import("node:fs/promises");
    const secret = (await readFile(ui?.secretFile ?? "", "utf8")).trim();
    expect((await fetch(`${ui?.url}api/status`)).status).toBe(401);
    const res = await fetch(`${ui?.url}api/status`, { headers: { authorization: `Bearer ${secret}` } });
    const body = (await res.json()) as { connection: { connected: boolean }; interfaces: { name: string }[] };
    expect(body.connection.connected).toBe(false);
    await h.agent.refresh();
    const after = (await (await fetch(`${ui?.url}api/status`, { headers: { authorization: `Bearer ${secret}` } })).json()) as {
      interfaces: { name: string; IPv4: string }[];
    };
    expect(after.interfaces.find((i) => i.name === "lan0")?.IPv4).toBe("192.168.50.1");
  });

  it("a status composed while an apply finishes carries the hash applied when it is sent, not the stale one", async () => {
    // Seen in the lab: the status of the welcome tick was composed before the first apply finished and sent
    // after its apply-result, so the server took the stale (null) hash for drift.
    const observing = deferred();
    const release = deferred();
    let holdNext = false;
    class SlowObserver extends TestDriver {
      async observe(): Promise<StatusPart> {
        // Only the status's observation waits; the apply's own reads go through.
        if (holdNext) {
          holdNext = false;
          observing.resolve();
          await release.promise;
        }
        return {};
      }
    }
    h = await startAgent(null, { drivers: [new SlowObserver("links")] });
    holdNext = true;
    const status = h.agent.refresh();
    await observing.promise;
    await h.agent.apply(A, "test");
    release.resolve();
    expect((await status).appliedHash).toBe(configHash(A));
  });
});
