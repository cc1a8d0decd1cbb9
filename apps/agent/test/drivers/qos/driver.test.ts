import { afterEach, describe, expect, it } from "vitest";
import { QosDriver } from "../../../src/drivers/qos/index.ts";
import { fullConfig, variant } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { FakeNft } from "../../support/fake-nft.ts";
import { FakeRunner } from "../../support/fake-runner.ts";
import { FakeTc } from "../../support/fake-tc.ts";

const server = { address: "203.0.113.5", port: 443 };
const shaped = variant(fullConfig(), (c) => {
  c.interfaces[1]!.bandwidthMbps = { tx: 20, rx: 100 };
});

describe("qos render", () => {
  it("renders the marking table and the HTB commands (golden)", async () => {
    const { script, tc } = new QosDriver().render(shaped, server);
    await expect(script).toMatchFileSnapshot("./golden/shaped.nft");
    const text = [...tc].map(([dev, cmds]) => `# ${dev}\n${cmds.map((c) => c.join(" ")).join("\n")}`).join("\n");
    await expect(`${text}\n`).toMatchFileSnapshot("./golden/shaped.tc");
    expect(tc.get("wan1")![1]!.join(" ")).toContain("rate 19000kbit ceil 19000kbit");
    expect(tc.get("wan0")![1]!.join(" ")).toContain("rate 10000000kbit");
  });

  it("marks without the control link when the server is unknown, and renders nothing when QoS is off", () => {
    expect(new QosDriver().render(fullConfig()).script).not.toContain("control link");
    const off = variant(fullConfig(), (c) => (c.qos.prioritizeManagement = false));
    expect(new QosDriver().render(off, server)).toEqual({ script: null, tc: new Map() });
  });

  it("rejects a bad server address with a machine code", () => {
    expect(() => new QosDriver().render(fullConfig(), { address: "not-an-ip", port: 443 })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", path: "controlServer.address" }),
    );
  });
});

describe("qos driver config sequence (fake runner)", () => {
  let ctx: DisposableContext;
  afterEach(() => ctx?.dispose());

  it("A → A → B → A → off: only differences mutate; off removes only the qdiscs it installed", async () => {
    const runner = new FakeRunner();
    const nft = new FakeNft(runner);
    const tc = new FakeTc(runner);
    // XFRM dataplane: no kernel-libipsec TUN to shape.
    runner.on(["ip", "-j", "link", "show", "dev", "ipsec0"], () => ({ exitCode: 1, stderr: 'Device "ipsec0" does not exist.' }));
    tc.roots.set("lan0", { kind: "pfifo", handle: "5:" });
    ctx = await testContext(runner, { controlServer: server });
    const driver = new QosDriver();
    const a = fullConfig();

    expect(await driver.apply(a, ctx)).toEqual({ changed: true });
    expect(runner.mutating().filter((c) => c.startsWith("tc qdisc replace dev") && c.includes(" root "))).toEqual([
      "tc qdisc replace dev wan0 root handle 1: htb default 20",
      "tc qdisc replace dev wan1 root handle 1: htb default 20",
    ]);
    expect(runner.mutating()).toHaveLength(13);
    expect(nft.tables.get("inet tern_qos")).toContain("ip daddr 203.0.113.5 tcp dport 443");

    runner.clear();
    expect(await driver.apply(a, ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);

    runner.clear();
    expect(await driver.apply(shaped, ctx)).toEqual({ changed: true });
    expect(runner.mutating().every((c) => c.includes("dev wan1"))).toBe(true);
    // A new line rate: the classes change, the HTB root stays (HTB cannot change its root in place).
    expect(runner.mutating()).toHaveLength(5);
    expect(runner.mutating().some((c) => c.includes(" root "))).toBe(false);

    runner.clear();
    tc.roots.delete("wan0"); // someone replaced our root qdisc
    expect(await driver.apply(a, ctx)).toEqual({ changed: true });
    expect(runner.mutating().filter((c) => c.includes("dev wan0"))).toHaveLength(6);
    // wan1 goes back to its unshaped rate: classes only, its root stayed.
    expect(runner.mutating().filter((c) => c.includes("dev wan1"))).toHaveLength(5);

    runner.clear();
    const off = variant(a, (c) => (c.qos.prioritizeManagement = false));
    expect(await driver.apply(off, ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual([
      "nft delete table inet tern_qos",
      "tc qdisc del dev wan0 root",
      "tc qdisc del dev wan1 root",
    ]);
    expect([...tc.roots.keys()]).toEqual(["lan0"]);
    runner.clear();
    expect(await driver.apply(off, ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);
  });

  it("shapes kernel-libipsec's TUN at 85 % of the slowest shaped WAN that carries tunnels, and only then", async () => {
    const runner = new FakeRunner();
    new FakeNft(runner);
    const tc = new FakeTc(runner);
    runner.on(["ip", "-j", "link", "show", "dev", "ipsec0"], () => ({ stdout: '[{"ifname":"ipsec0"}]' }));
    ctx = await testContext(runner, { controlServer: server });
    const driver = new QosDriver();
    const tunnelWans = new Set(fullConfig().tunnels.map((t) => t.localInterface));
    const rated = variant(fullConfig(), (c) => {
      for (const i of c.interfaces)
        if (i.type === "WAN") i.bandwidthMbps = tunnelWans.has(i.name) ? { tx: 10, rx: 10 } : { tx: 5, rx: 5 };
    });
    await driver.apply(rated, ctx);
    // 10 Mbit/s → WAN shaped at 9500 kbit → TUN at 8075 kbit; the 5 Mbit/s WAN carries no tunnel and does not count.
    expect(runner.mutating().filter((c) => c.includes("dev ipsec0") && c.includes("classid 1:1 "))).toEqual([
      expect.stringContaining("rate 8075kbit ceil 8075kbit"),
    ]);
    expect(tc.roots.get("ipsec0")).toEqual({ kind: "htb", handle: "1:" });
    runner.clear();
    // No line rate entered: nothing to stay under, the TUN is left alone (and its HTB removed).
    await driver.apply(fullConfig(), ctx);
    expect(runner.mutating()).toContain("tc qdisc del dev ipsec0 root");
    expect(tc.roots.has("ipsec0")).toBe(false);
  });

  it("re-renders when the control server changes", async () => {
    const runner = new FakeRunner();
    const nft = new FakeNft(runner);
    new FakeTc(runner);
    ctx = await testContext(runner, { controlServer: server });
    const driver = new QosDriver();
    await driver.apply(fullConfig(), ctx);
    runner.clear();
    ctx.controlServer = { address: "203.0.113.6", port: 8443 };
    expect(await driver.apply(fullConfig(), ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual([`nft -f ${ctx.runDir}/qos/tern_qos.nft`]);
    expect(nft.tables.get("inet tern_qos")).toContain("ip daddr 203.0.113.6 tcp dport 8443");
  });
});
