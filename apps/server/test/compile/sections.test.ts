/** Rule-by-rule checks of the compile step, each on the smallest input that shows it. */
import { DeviceInterface, PeerCreate } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  CompileError,
  type CompileInput,
  compileDeviceConfig,
  espProposal,
  ikeIdentity,
  ikeProposal,
  publishedSubnets,
  remoteAddressFor,
} from "../../src/compile/index.ts";
import { device, edgeA, id, ORG, PATH_LABELS, PL_INET, PL_MPLS, POLICY_ID, policy, sampleOrg, vrrpGroup } from "./fixtures.ts";

const bare = (d: CompileInput["device"]): CompileInput => ({
  device: d,
  organization: ORG,
  tunnels: [],
  vrrpGroups: [],
  multiLinkPolicy: null,
  pathLabels: PATH_LABELS,
});

describe("IKE and ESP proposals from a peer's fields", () => {
  const peer = (fields: Partial<PeerCreate>) =>
    PeerCreate.parse({ name: "p", remoteIP: "192.0.2.1", psk: "12345678", remoteTrafficSelectors: ["10.0.0.0/8"], ...fields });
  it.each([
    [{}, "aes256-sha256-modp2048", "aes256-sha256"],
    [{ pfs: true }, "aes256-sha256-modp2048", "aes256-sha256-modp2048"],
    [{ ikeKeySize: 128, ikeIntegAlg: "sha512", ikeDhGroup: "ecp256" }, "aes128-sha512-ecp256", "aes256-sha256"],
    [{ ikeCryptoAlg: "aes-gcm", ikeIntegAlg: "sha384" }, "aes256gcm16-prfsha384-modp2048", "aes256-sha256"],
    [
      { espCryptoAlg: "aes-gcm", espKeySize: 128, pfs: true, espDhGroup: "curve25519" },
      "aes256-sha256-modp2048",
      "aes128gcm16-curve25519",
    ],
    [{ espCryptoAlg: "aes-gcm", pfs: false, espIntegAlg: "sha512" }, "aes256-sha256-modp2048", "aes256gcm16"],
    [{ espIntegAlg: "sha384", espDhGroup: "modp4096", pfs: true }, "aes256-sha256-modp2048", "aes256-sha384-modp4096"],
  ] as const)("%j → IKE %s, ESP %s", (fields, ike, esp) => {
    const p = peer(fields as Partial<PeerCreate>);
    expect(ikeProposal(p)).toBe(ike);
    expect(espProposal(p)).toBe(esp);
  });

  it.each([
    ["ip", "192.0.2.1", "192.0.2.1"],
    ["fqdn", "gw.example", "fqdn:gw.example"],
    ["email", "vpn@example", "email:vpn@example"],
    ["keyid", "0a1b", "keyid:0a1b"],
  ] as const)("identity %s %s → %s", (type, value, expected) => {
    expect(ikeIdentity(type, value)).toBe(expected);
  });
});

describe("remoteAddressFor", () => {
  const end = (IPv4: string, mask: number, PublicIP = "") =>
    DeviceInterface.parse({ id: id(1), devId: "x", name: "wan0", IPv4, IPv4Mask: mask, PublicIP });
  it.each([
    ["no NAT: the remote's own address", end("10.0.1.2", 24), end("10.0.2.2", 24), "10.0.2.2"],
    ["public IP equal to the address is not NAT", end("10.0.1.2", 24), end("198.51.100.2", 24, "198.51.100.2"), "198.51.100.2"],
    [
      "remote behind NAT, other site: its public address",
      end("10.0.1.2", 24),
      end("192.168.1.9", 24, "203.0.113.9"),
      "203.0.113.9",
    ],
    [
      "remote behind NAT, same subnet: its private address",
      end("192.168.1.5", 24),
      end("192.168.1.9", 24, "203.0.113.9"),
      "192.168.1.9",
    ],
    [
      "both behind the same NAT: private address, no hairpin",
      end("192.168.2.5", 24, "203.0.113.9"),
      end("192.168.1.9", 24, "203.0.113.9"),
      "192.168.1.9",
    ],
    [
      "remote address unknown (DHCP not reported): its public address",
      end("10.0.1.2", 24),
      end("", 24, "203.0.113.7"),
      "203.0.113.7",
    ],
    ["a PublicIP that is not an address is ignored", end("10.0.1.2", 24), end("10.0.2.2", 24, "unknown"), "10.0.2.2"],
  ])("%s", (_name, local, remote, expected) => {
    expect(remoteAddressFor(local, remote)).toBe(expected);
  });
  it("is null when nothing is known about the remote", () => {
    expect(remoteAddressFor(end("10.0.1.2", 24), end("", 24))).toBeNull();
  });
});

describe("publishedSubnets", () => {
  const lan = (devId: string, IPv4: string, IPv4Mask: number, isAssigned = true) => ({
    id: id(0x50 + IPv4Mask),
    devId,
    name: `lan-${devId}`,
    type: "LAN" as const,
    isAssigned,
    IPv4,
    IPv4Mask,
  });
  it("publishes LAN subnets, translated prefixes where NAT maps them, never unassigned or WAN ones", () => {
    const d = device({
      id: id(1),
      name: "x",
      interfaces: [
        lan("l1", "192.168.1.1", 24),
        lan("l2", "192.168.2.1", 24),
        lan("l3", "192.168.3.1", 24, false),
        { id: id(0x99), devId: "w", name: "wan0", type: "WAN", isAssigned: true, IPv4: "10.0.0.2", IPv4Mask: 24 },
      ],
      firewall: {
        rules: [
          // Two halves of l2 map to two translated /25s; the untranslated subnet is not published.
          { direction: "lanNat", interface: "l2", source: "192.168.2.0/25", translated: "10.2.0.0/25" },
          { direction: "lanNat", interface: "l2", source: "192.168.2.128/25", translated: "10.2.9.128/25" },
          // Disabled, and a source outside its LAN: both ignored.
          { direction: "lanNat", enabled: false, interface: "l1", source: "192.168.1.0/24", translated: "10.1.0.0/24" },
          { direction: "lanNat", interface: "l1", source: "192.168.9.0/24", translated: "10.9.0.0/24" },
        ],
      },
    });
    expect(publishedSubnets(d)).toEqual(["10.2.0.0/25", "10.2.9.128/25", "192.168.1.0/24"]);
  });
});

describe("compile rules", () => {
  it("leaves unassigned interfaces out and sorts the rest by name", () => {
    const { config } = compileDeviceConfig(bare(edgeA()));
    expect(config.interfaces.map((i) => i.name)).toEqual(["lan0", "wan0", "wan1"]);
    expect(config.interfaces.find((i) => i.name === "lan0")?.gateway).toBeNull();
  });

  it("configures a DHCP-client WAN without a static address or gateway", () => {
    const d = device({
      id: id(1),
      name: "x",
      interfaces: [
        {
          id: id(2),
          devId: "w",
          name: "wan0",
          type: "WAN",
          isAssigned: true,
          dhcp: true,
          IPv4: "100.64.0.9",
          IPv4Mask: 10,
          gateway: "100.64.0.1",
        },
      ],
    });
    expect(compileDeviceConfig(bare(d)).config.interfaces[0]).toMatchObject({ dhcp: true, address: null, gateway: null });
  });

  it("sets the routers option: VRRP virtual IP over the admin's value, else the admin's, else the interface address", () => {
    const org = sampleOrg();
    const withGroup = compileDeviceConfig(org.inputFor(org.c)).config.dhcp[0]!;
    expect(withGroup.options).toEqual([{ code: 3, name: "routers", value: "192.168.50.254" }]);
    const noGroup = compileDeviceConfig({ ...org.inputFor(org.c), vrrpGroups: [] }).config.dhcp[0]!;
    expect(noGroup.options).toEqual([{ code: 3, name: "routers", value: "192.168.50.3" }]);
    const b = compileDeviceConfig(org.inputFor(org.b)).config.dhcp[0]!;
    expect(b.options).toEqual([{ code: 3, name: "routers", value: "192.168.60.1" }]);
  });

  it("maps reservations with sendHostName from useHostNameAsDhcpOption, MACs lower-case, sorted by address", () => {
    const d = device({
      id: id(1),
      name: "x",
      interfaces: [{ id: id(2), devId: "l", name: "lan0", type: "LAN", isAssigned: true, IPv4: "10.1.0.1", IPv4Mask: 24 }],
      dhcp: [
        {
          interface: "l",
          rangeStart: "10.1.0.100",
          rangeEnd: "10.1.0.200",
          macAssign: [
            { host: "cam", mac: "02:AA:00:00:00:02", ipv4: "10.1.0.30" },
            { host: "nas", mac: "02:aa:00:00:00:01", ipv4: "10.1.0.9", useHostNameAsDhcpOption: true },
          ],
        },
      ],
    });
    expect(compileDeviceConfig(bare(d)).config.dhcp[0]?.reservations).toEqual([
      { host: "nas", mac: "02:aa:00:00:00:01", ipv4: "10.1.0.9", sendHostName: true },
      { host: "cam", mac: "02:aa:00:00:00:02", ipv4: "10.1.0.30", sendHostName: false },
    ]);
  });

  it("compiles BGP only when enabled, and takes the first LAN address as router id when none is given", () => {
    const org = sampleOrg();
    expect(compileDeviceConfig(org.inputFor({ ...org.b, bgp: { ...org.b.bgp, enable: false } })).config.bgp).toBeNull();
    expect(compileDeviceConfig(org.inputFor(org.b)).config.bgp?.routerId).toBe("192.168.60.1");
  });

  it("keeps filter rules only with deviceSpecificRulesEnabled, first by priority, equal priorities in the admin's order", () => {
    const d = device({
      id: id(1),
      name: "x",
      interfaces: [{ id: id(2), devId: "w", name: "wan0", type: "WAN", isAssigned: true, IPv4: "10.0.0.2", IPv4Mask: 24 }],
      deviceSpecificRulesEnabled: true,
      firewall: {
        rules: [
          { direction: "inbound", priority: 20, action: "deny", interface: "", match: { protocol: "udp" } },
          { direction: "inbound", priority: 10, action: "allow", interface: "w", match: { protocol: "tcp", ports: "443" } },
          { direction: "inbound", priority: 20, action: "allow", interface: "", match: { protocol: "icmp" } },
        ],
      },
    });
    const on = compileDeviceConfig(bare(d)).config.firewall.inbound;
    expect(on.map((r) => [r.priority, r.action, r.interface, r.protocol])).toEqual([
      [10, "allow", "wan0", "tcp"],
      [20, "deny", null, "udp"],
      [20, "allow", null, "icmp"],
    ]);
    expect(compileDeviceConfig(bare({ ...d, deviceSpecificRulesEnabled: false })).config.firewall.inbound).toEqual([]);
  });

  it("drops path labels that no longer exist from policy rules, keeping the order of the rest", () => {
    const p = policy();
    const rule = p.rules[0]!;
    const mlp = { ...p, rules: [{ ...rule, action: { ...rule.action, pathlabels: [PL_INET, id(0x5aa), PL_MPLS] } }] };
    const { config, warnings } = compileDeviceConfig({ ...bare(edgeA()), multiLinkPolicy: mlp });
    expect(config.policy?.rules[0]?.pathLabels).toEqual([PL_INET, PL_MPLS]);
    expect(warnings.map((w) => w.subject)).toContainEqual({ type: "mlpolicy", id: POLICY_ID });
  });

  it("gives priority-order rules no link-quality thresholds and link-quality rules the defaults when none are set", () => {
    const p = policy();
    const rule = p.rules[0]!;
    const mlp = {
      ...p,
      rules: [
        {
          ...rule,
          name: "a",
          priority: 1,
          action: { order: "priority" as const, pathlabels: [PL_MPLS], fallback: "drop" as const },
        },
        {
          ...rule,
          name: "b",
          priority: 2,
          action: { order: "link-quality" as const, pathlabels: [PL_MPLS], fallback: "drop" as const },
        },
        { ...rule, name: "c", priority: 3, enabled: false },
      ],
    };
    const rules = compileDeviceConfig({ ...bare(edgeA()), multiLinkPolicy: mlp }).config.policy?.rules;
    expect(rules?.map((r) => [r.name, r.linkQuality])).toEqual([
      ["a", null],
      ["b", { maxLossPercent: 5, maxLatencyMs: 300, maxJitterMs: 50, holdDownSeconds: 10 }],
    ]);
  });

  it("names tracked interfaces and drops ones that are not assigned", () => {
    const org = sampleOrg();
    const g = vrrpGroup();
    const member = { ...g.devices[0]!, trackInterfacesOptional: ["mac:02:00:00:00:0a:09", "mac:02:00:00:00:0a:03"] };
    const { config, warnings } = compileDeviceConfig({ ...org.inputFor(org.a), vrrpGroups: [{ ...g, devices: [member] }] });
    expect(config.vrrp[0]).toMatchObject({ trackOptional: ["wan1"], trackMandatory: ["wan0"], prefix: 24, priority: 150 });
    expect(warnings.some((w) => w.path.endsWith("trackInterfacesOptional"))).toBe(true);
  });

  it("merges monitoring overrides over the defaults", () => {
    const { config } = compileDeviceConfig({ ...bare(edgeA()), monitoring: { statusIntervalMs: 10000 } });
    expect(config.monitoring).toEqual({ probeIntervalMs: 200, windowSize: 300, downAfterMs: 15000, statusIntervalMs: 10000 });
  });

  it("carries a WAN's entered line rate (for management QoS), not the 100/100 placeholder, and no LAN's", () => {
    const d = edgeA();
    const rated = {
      ...d,
      interfaces: d.interfaces.map((i) =>
        i.name === "wan1" || i.name === "lan0" ? { ...i, bandwidthMbps: { tx: 10, rx: 50 } } : i,
      ),
    };
    const ifaces = compileDeviceConfig(bare(rated)).config.interfaces;
    expect(ifaces.map((i) => [i.name, i.bandwidthMbps])).toEqual([
      ["lan0", undefined],
      ["wan0", undefined],
      ["wan1", { tx: 10, rx: 50 }],
    ]);
  });

  it("throws CompileError naming the path when the result would fail the protocol schema", () => {
    const d = edgeA();
    const broken = {
      ...d,
      interfaces: d.interfaces.map((i) => (i.name === "wan1" ? { ...i, name: "this-name-is-too-long0" } : i)),
    };
    let error: unknown;
    try {
      compileDeviceConfig(bare(broken));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CompileError);
    // Sorted by name, the long name lands between lan0 and wan0.
    expect((error as CompileError).details.map((x) => x.path)).toEqual(["interfaces.1.name"]);
  });
});
