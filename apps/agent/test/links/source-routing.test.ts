/**
 * Source routing per WAN (limit 6 of the spec): each WAN address gets its own
 * table, so IKE/ESP bound to wan1's address leave through wan1 even when
 * wan0's default route has the lower metric. Pure part and config sequences
 * on the fake system.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { desiredLinks, LinksDriver } from "../../src/drivers/links/index.ts";
import { desiredSourceRoutes, sourceRules } from "../../src/drivers/links/source-routing.ts";
import { iface, linksConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";

const TWO_WANS = linksConfig([
  iface("wan0", { type: "WAN", address: "100.64.1.2/24", gateway: "100.64.1.1", metric: 100 }),
  iface("wan1", { type: "WAN", address: "100.65.1.2/24", gateway: "100.65.1.1", metric: 200 }),
  iface("lan0", { address: "192.168.10.1/24" }),
]);

describe("source routing per WAN", () => {
  it("gives each WAN with an address and a gateway its table and two rules, by position among the WANs", () => {
    const config = linksConfig([
      iface("wan0", { type: "WAN", address: "100.64.1.2/24" }),
      iface("wan1", { type: "WAN", address: "100.65.1.2/24", gateway: "100.65.1.1", metric: 200 }),
    ]);
    const routes = desiredSourceRoutes(config, desiredLinks(config));
    // wan0 has no gateway: nothing to route it through; wan1 keeps its own slot (1), not wan0's.
    expect(routes).toEqual([
      { wan: "wan1", address: "100.65.1.2", gateway: "100.65.1.1", table: 29001, priorities: [29002, 29003] },
    ]);
    expect([...sourceRules(routes)]).toEqual([
      [29002, ["from", "100.65.1.2", "lookup", "main", "suppress_prefixlength", "0"]],
      [29003, ["from", "100.65.1.2", "lookup", "29001"]],
    ]);
  });

  describe("on the fake system", () => {
    let dirs: TempDirs;
    let sys: FakeSystem;
    let driver: LinksDriver;
    beforeEach(async () => {
      dirs = await tempDirs("links-src");
      sys = new FakeSystem([{ name: "wan0" }, { name: "wan1" }, { name: "lan0" }]);
      driver = new LinksDriver();
    });
    afterEach(async () => {
      driver.close();
      await dirs.remove();
    });
    const apply = async (config: typeof TWO_WANS) => {
      const outcome = await driver.apply(config, driverContext(sys, dirs));
      return { changed: outcome.changed, commands: sys.takeMutating() };
    };
    const owned = () =>
      sys.kernel.rules
        .filter((r) => r.priority >= 29000 && r.priority < 29128)
        .map((r) => `${r.priority} from ${r.src} lookup ${r.table}${r.suppress === undefined ? "" : ` suppress ${r.suppress}`}`);

    it("two WANs: each address has its own way out; same config again changes nothing; a foreign rule stays", async () => {
      sys.kernel.rules.push({ priority: 100, src: "10.0.0.1", table: "main" });
      const first = await apply(TWO_WANS);
      expect(first.commands.filter((c) => c.includes("rule") || c.includes("table"))).toEqual([
        "ip -4 rule add priority 29000 from 100.64.1.2 lookup main suppress_prefixlength 0",
        "ip -4 rule add priority 29001 from 100.64.1.2 lookup 29000",
        "ip -4 rule add priority 29002 from 100.65.1.2 lookup main suppress_prefixlength 0",
        "ip -4 rule add priority 29003 from 100.65.1.2 lookup 29001",
        "ip -4 route replace blackhole default table 29000 metric 4294967295 proto 57",
        "ip -4 route replace default via 100.64.1.1 dev wan0 table 29000 proto 57",
        "ip -4 route replace blackhole default table 29001 metric 4294967295 proto 57",
        "ip -4 route replace default via 100.65.1.1 dev wan1 table 29001 proto 57",
      ]);
      expect(sys.kernel.defaultRoute(29001)).toBe("via 100.65.1.1 dev wan1");
      expect(await apply(TWO_WANS)).toEqual({ changed: false, commands: [] });

      // A rule someone changed in the owned range is put back; the foreign one is left alone.
      sys.kernel.rules.find((r) => r.priority === 29003)!.table = "main";
      expect((await apply(TWO_WANS)).commands).toEqual([
        "ip -4 rule del priority 29003",
        "ip -4 rule add priority 29003 from 100.65.1.2 lookup 29001",
      ]);

      // wan1 goes away: its rules and table go, wan0's stay.
      const oneWan = linksConfig([TWO_WANS.interfaces[0]!, TWO_WANS.interfaces[2]!]);
      const after = await apply(oneWan);
      expect(after.commands.filter((c) => c.includes("rule") || c.includes("table"))).toEqual([
        "ip -4 rule del priority 29002",
        "ip -4 rule del priority 29003",
        "ip -4 route flush table 29001",
      ]);
      expect(sys.kernel.defaultRoute(29001)).toBeNull();
      expect(owned()).toEqual(["29000 from 100.64.1.2 lookup main suppress 0", "29001 from 100.64.1.2 lookup 29000"]);
      expect(sys.kernel.rules.some((r) => r.priority === 100)).toBe(true);
    });
  });
});
