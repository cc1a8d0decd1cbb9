import { afterEach, describe, expect, it } from "vitest";
import { FirewallDriver } from "../../../src/drivers/firewall/index.ts";
import { emptyConfig, fullConfig, variant } from "../../support/configs.ts";
import { type DisposableContext, testContext } from "../../support/context.ts";
import { FakeNft } from "../../support/fake-nft.ts";
import { FakeRunner } from "../../support/fake-runner.ts";

describe("firewall driver config sequence (fake runner)", () => {
  let ctx: DisposableContext;
  afterEach(() => ctx?.dispose());

  it("A → A → B → A → empty → empty: only differences mutate, teardown removes only its table", async () => {
    const runner = new FakeRunner();
    const nft = new FakeNft(runner);
    nft.tables.set("inet someone_else", "  chain x {}\n");
    ctx = await testContext(runner);
    const driver = new FirewallDriver();
    const a = fullConfig();
    const b = variant(a, (c) => {
      c.firewall.lanNat.push({ interface: "lan0", source: "192.168.51.0/24", translated: "10.51.0.0/24" });
    });
    const nftF = `nft -f ${ctx.runDir}/firewall/tern.nft`;

    expect(await driver.apply(a, ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual([nftF]);
    expect(nft.tables.get("inet tern")).toContain("192.168.50.0/24 : 10.50.0.0/24");

    runner.clear();
    expect(await driver.apply(a, ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);

    runner.clear();
    expect(await driver.apply(b, ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual([nftF]);
    expect(nft.tables.get("inet tern")).toContain("192.168.51.0/24 : 10.51.0.0/24");

    runner.clear();
    expect(await driver.apply(a, ctx)).toEqual({ changed: true });
    expect(nft.tables.get("inet tern")).not.toContain("192.168.51.0/24");

    runner.clear();
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toEqual(["nft delete table inet tern"]);
    expect([...nft.tables.keys()]).toEqual(["inet someone_else"]);

    runner.clear();
    expect(await driver.apply(emptyConfig(), ctx)).toEqual({ changed: false });
    expect(runner.mutating()).toEqual([]);
  });

  it("re-applies when the table was edited or deleted by hand", async () => {
    const runner = new FakeRunner();
    const nft = new FakeNft(runner);
    ctx = await testContext(runner);
    const driver = new FirewallDriver();
    await driver.apply(fullConfig(), ctx);
    nft.tamper("inet tern");
    runner.clear();
    expect(await driver.apply(fullConfig(), ctx)).toEqual({ changed: true });
    expect(runner.mutating()).toHaveLength(1);
    nft.tables.delete("inet tern");
    expect(await driver.apply(fullConfig(), ctx)).toEqual({ changed: true });
    expect(nft.tables.has("inet tern")).toBe(true);
  });

  it("leaves the system and its state untouched when nft rejects the script", async () => {
    const runner = new FakeRunner();
    const nft = new FakeNft(runner);
    ctx = await testContext(runner);
    const driver = new FirewallDriver();
    await driver.apply(fullConfig(), ctx);
    const before = nft.tables.get("inet tern");
    runner.on(["nft", "-f"], () => ({ exitCode: 1, stderr: "Error: syntax error" }));
    const b = variant(fullConfig(), (c) => {
      c.firewall.inbound[0]!.ports = "23";
    });
    await expect(driver.apply(b, ctx)).rejects.toThrow(/syntax error/);
    expect(nft.tables.get("inet tern")).toBe(before);
  });
});
