import { afterAll, describe, expect, it } from "vitest";
import { deleteNetns, listNetns, Netns, NetnsScope, privilegedTestsEnabled, run } from "../src/index.ts";

const enabled = privilegedTestsEnabled("netlab namespaces", ["ip", "ping"]);

describe.runIf(enabled)("NetnsScope", () => {
  const scope = new NetnsScope("netlab");
  afterAll(() => scope.cleanup());

  it("links two namespaces and pings across", async () => {
    const a = await scope.netns("a");
    const b = await scope.netns("b");
    await scope.veth(a, "veth-a", b, "veth-b");
    await a.addAddress("veth-a", "10.99.0.1/30");
    await b.addAddress("veth-b", "10.99.0.2/30");
    const r = await a.exec(["ping", "-c", "1", "-W", "1", "10.99.0.2"]);
    expect(r.stdout).toMatch(/1 received/);
  });

  it("kills spawned processes and deletes namespaces in cleanup", async () => {
    const local = new NetnsScope("netlab");
    const ns = await local.netns("c");
    const child = local.spawn(ns, ["sleep", "60"]);
    await Netns.waitFor("sleep to start", async () => child.pid !== undefined);
    await local.cleanup();
    const list = await run(["ip", "netns", "list"]);
    expect(list.stdout).not.toContain(ns.name);
    expect(child.killed || child.exitCode !== null || child.signalCode !== null).toBe(true);
  });

  it("reopens a scope by id: names, existing namespaces and reuse", async () => {
    const first = new NetnsScope("netlab");
    const ns = await first.netns("keep");
    const again = new NetnsScope("netlab", first.id);
    expect(again.nameOf("keep")).toBe(ns.name);
    expect(await again.existing()).toEqual([ns.name]);
    await expect(again.netns("keep")).rejects.toThrow(/ip netns add/);
    const reused = await again.netns("keep", { reuse: true });
    expect(reused.name).toBe(ns.name);
    await deleteNetns(ns.name);
    expect(await listNetns()).not.toContain(ns.name);
    expect(await again.existing()).toEqual([]);
  });
});
