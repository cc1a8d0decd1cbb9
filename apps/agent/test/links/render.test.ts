import { DeviceConfig } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  type DhcpLease,
  desiredLinks,
  dhcpClientPaths,
  LinksDriver,
  maskToPrefix,
  parseAddrShow,
  parseLease,
  parseRoutes,
  renderDhclientScript,
} from "../../src/drivers/links/index.ts";
import { fixture, iface, linksConfig, route } from "../support/configs.ts";

const planCtx = { mode: "standalone" as const, runDir: "/run/tern-agent", stateDir: "/var/lib/tern-agent" };

function planText(config: DeviceConfig): string {
  const { files, commands } = new LinksDriver().plan(config, planCtx);
  return [
    ...files.map((f) => `--- file ${f.path} (mode ${f.mode.toString(8)})\n${f.content}`),
    ...commands.map((c) => `$ ${c.join(" ")}`),
    "",
  ].join("\n");
}

describe("links render (golden)", () => {
  it("plans the full fixture: MTU, up, addresses, one default route per WAN gateway, static routes", async () => {
    const config = DeviceConfig.parse(fixture("DeviceConfig", "valid-full"));
    await expect(planText(config)).toMatchFileSnapshot("../golden/links/plan-valid-full.txt");
  });

  it("plans a DHCP WAN: dhclient files and a per-instance dhclient, no address until a lease exists", async () => {
    const config = linksConfig([
      iface("wan0", { type: "WAN", dhcp: true, metric: 20 }),
      iface("lan0", { address: "192.168.1.1/24" }),
    ]);
    await expect(planText(config)).toMatchFileSnapshot("../golden/links/plan-dhcp-wan.txt");
  });

  it("plans nothing for an empty config", () => {
    expect(planText(linksConfig([]))).toBe("");
  });

  it("takes address and default route from a lease, with the metric of the config", () => {
    const lease: DhcpLease = {
      address: "100.64.0.9",
      prefix: 22,
      routers: ["100.64.0.1", "100.64.0.2"],
      leaseSeconds: 600,
      reason: "BOUND",
    };
    const d = desiredLinks(linksConfig([iface("wan0", { type: "WAN", dhcp: true, metric: 7 })]), new Map([["wan0", lease]]));
    expect(d.links[0]?.addresses).toEqual(["100.64.0.9/22"]);
    expect(d.routes).toEqual([{ dst: "0.0.0.0/0", gateway: "100.64.0.1", dev: "wan0", metric: 7, origin: "wan0 dhcp" }]);
  });

  it("refuses colliding routes and contradictory interfaces before anything runs", () => {
    const twoDefaults = linksConfig([
      iface("wan0", { type: "WAN", address: "10.0.0.2/24", gateway: "10.0.0.1" }),
      iface("wan1", { type: "WAN", address: "10.0.1.2/24", gateway: "10.0.1.1" }),
    ]);
    expect(() => desiredLinks(twoDefaults)).toThrow(expect.objectContaining({ code: "ROUTE_CONFLICT" }));
    const dhcpAndStatic = linksConfig([iface("wan0", { dhcp: true, address: "10.0.0.2/24" })]);
    expect(() => desiredLinks(dhcpAndStatic)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
    const twice = linksConfig([iface("lan0"), iface("lan0")]);
    expect(() => desiredLinks(twice)).toThrow(/appears twice/);
    const unknownIf = linksConfig([iface("lan0")], [route("10.9.0.0/16", "192.168.1.254", { ifname: "lan9" })]);
    expect(() => desiredLinks(unknownIf)).toThrow(/lan9 is not in the config/);
  });

  it("renders a dhclient script that quotes its directory for the shell", () => {
    const script = renderDhclientScript(dhcpClientPaths("/tmp/it's here"));
    expect(script).toContain(`dir='/tmp/it'\\''s here/links'`);
    expect(script).not.toContain("/etc/");
    expect(script).not.toMatch(/\bip (addr|route)\b/);
  });
});

describe("lease and iproute2 parsing", () => {
  it("parses a lease written by the script", () => {
    expect(
      parseLease("reason=BOUND\nip=10.7.0.132\nmask=255.255.255.0\nrouters=10.7.0.1\nlease=3600\nserver=10.7.0.1\n"),
    ).toEqual({
      address: "10.7.0.132",
      prefix: 24,
      routers: ["10.7.0.1"],
      leaseSeconds: 3600,
      reason: "BOUND",
    });
    expect(parseLease("reason=BOUND\nip=\nmask=\n")).toBeNull();
    expect(parseLease("ip=10.0.0.1\nmask=255.0.255.0\n")).toBeNull();
  });

  it("converts masks to prefixes and rejects holes", () => {
    expect([maskToPrefix("0.0.0.0"), maskToPrefix("255.255.255.255"), maskToPrefix("255.255.252.0")]).toEqual([0, 32, 22]);
    expect(maskToPrefix("255.0.255.0")).toBeNull();
  });

  it("reads ip -j addr and route output (real iproute2 6.1 shapes)", () => {
    const links = parseAddrShow(
      '[{"ifindex":3,"link":"veth1x","ifname":"veth0x","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1400,"qdisc":"noqueue","operstate":"UP","group":"default","txqlen":1000,"link_type":"ether","address":"a2:ff:f5:5c:15:18","broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[{"family":"inet","local":"10.9.0.1","prefixlen":24,"scope":"global","label":"veth0x","valid_life_time":4294967295,"preferred_life_time":4294967295},{"family":"inet6","local":"fe80::a0ff:f5ff:fe5c:1518","prefixlen":64,"scope":"link"}],"stats64":{"rx":{"bytes":90,"packets":1},"tx":{"bytes":91,"packets":1}}}]',
    );
    expect(links).toEqual([
      {
        name: "veth0x",
        ifindex: 3,
        mac: "a2:ff:f5:5c:15:18",
        mtu: 1400,
        adminUp: true,
        operState: "up",
        linkType: "ether",
        addresses: [{ cidr: "10.9.0.1/24", dynamic: false }],
        rxBytes: 90,
        txBytes: 91,
        counters: { rxPackets: 1, txPackets: 1, rxErrors: 0, txErrors: 0, rxDrops: 0, txDrops: 0 },
      },
    ]);
    expect(
      parseRoutes(
        '[{"dst":"default","gateway":"10.9.0.2","dev":"veth0x","metric":5,"flags":[]},{"dst":"10.1.2.3","gateway":"10.9.0.2","dev":"veth0x","flags":[]},{"dst":"blackhole-ish","type":"blackhole","flags":[]}]',
      ),
    ).toEqual([
      { dst: "0.0.0.0/0", gateway: "10.9.0.2", dev: "veth0x", metric: 5 },
      { dst: "10.1.2.3/32", gateway: "10.9.0.2", dev: "veth0x", metric: 0 },
    ]);
    expect(() => parseAddrShow('{"not":"an array"}')).toThrow(/JSON array/);
  });
});
