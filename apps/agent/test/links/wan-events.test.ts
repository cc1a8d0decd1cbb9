/** The links driver and the kernel's WAN events: a static WAN address removed or replaced under the agent is put back. */
import { afterEach, describe, expect, it } from "vitest";
import { LinksDriver } from "../../src/drivers/links/index.ts";
import type { WanChange } from "../../src/kernel-events/index.ts";
import { iface, linksConfig } from "../support/configs.ts";
import { type DisposableContext, testContext } from "../support/context.ts";
import { FakeRunner } from "../support/fake-runner.ts";

const at = (ifname: string, address: string | null, carrier = true) => ({ ifname, carrier, address });
const change = (ifname: string, before: string | null, after: string | null, carrier = true): WanChange => ({
  ifname,
  before: at(ifname, before),
  after: at(ifname, after, carrier),
  seenAt: 0,
});

describe("links driver: WAN events", () => {
  let ctx: DisposableContext;
  afterEach(async () => ctx?.dispose());

  it("asks for a reconcile when a static WAN's address goes or is replaced, not for DHCP WANs, carrier or its own address", async () => {
    const reasons: string[] = [];
    ctx = await testContext(new FakeRunner(), { requestReconcile: (r) => void reasons.push(r) });
    const config = linksConfig([
      iface("wan0", { type: "WAN", address: "10.0.0.2/24", gateway: "10.0.0.1" }),
      iface("wan1", { type: "WAN", dhcp: true }),
    ]);
    const d = new LinksDriver();
    await d.wanChanged([change("wan0", "10.0.0.2", null)], config, ctx);
    await d.wanChanged([change("wan0", "10.0.0.2", "10.0.0.7")], config, ctx);
    expect(reasons).toEqual([
      "wan0 address 10.0.0.2 removed: the configured address 10.0.0.2/24 is put back",
      "wan0 address 10.0.0.2 → 10.0.0.7: the configured address 10.0.0.2/24 is put back",
    ]);
    await d.wanChanged([change("wan0", null, "10.0.0.2")], config, ctx);
    await d.wanChanged([change("wan0", "10.0.0.2", "10.0.0.2", false)], config, ctx);
    await d.wanChanged([change("wan1", "10.1.0.5", "10.1.0.6")], config, ctx);
    expect(reasons).toHaveLength(2);
  });
});
