/** validateDevice, table-driven: each row breaks one thing in a valid device and names exactly the problems expected. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Device } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { validateDevice } from "../../src/validate/index.ts";
import { edgeA, edgeB, edgeC } from "../compile/fixtures.ts";
import { baseDevice, edited, type TestDevice, TUNNEL_RANGE } from "./base-device.ts";

const context = { tunnelRange: TUNNEL_RANGE };
const codesAndPaths = (d: TestDevice, ctx: Parameters<typeof validateDevice>[1] = context) =>
  validateDevice(d, ctx).map((p) => `${p.code} ${p.path}`);

const iface = (d: TestDevice, name: string) => d.interfaces.find((i) => i.name === name)!;
const V = (path: string) => `VALIDATION_FAILED ${path}`;

describe("valid devices have no problems", () => {
  it("the base device", () => expect(validateDevice(baseDevice(), context)).toEqual([]));
  it("the protocol's full Device fixture", () => {
    const path = join(
      import.meta.dirname,
      "..",
      "..",
      "..",
      "..",
      "packages",
      "protocol",
      "fixtures",
      "v1",
      "Device",
      "valid-full.json",
    );
    const device = Device.parse(JSON.parse(readFileSync(path, "utf8")));
    expect(validateDevice(device, { tunnelRange: "10.200.0.0/16" })).toEqual([]);
  });
  it.each([
    ["edge-a", edgeA],
    ["edge-b", edgeB],
    ["edge-c", edgeC],
  ])("the compile fixture %s", (_n, build) => expect(validateDevice(build(), { tunnelRange: "10.200.0.0/16" })).toEqual([]));
});

type Row = [string, (d: TestDevice) => void, string[]];

const interfaceRows: Row[] = [
  [
    "duplicate devId",
    (d) => {
      iface(d, "lan1").devId = "l0";
    },
    [V("interfaces.3.devId"), V("dhcp.1.interface"), V("firewall.rules.3.interface"), V("firewall.rules.4.interface")],
  ],
  [
    "duplicate name",
    (d) => {
      iface(d, "lan1").name = "lan0";
    },
    [V("interfaces.3.name")],
  ],
  [
    "address without prefix length",
    (d) => {
      iface(d, "wan1").IPv4Mask = null;
    },
    // Without its subnet, wan1 no longer connects the route's gateway or the single-hop neighbour.
    [V("interfaces.1.IPv4Mask"), V("staticRoutes.2.gateway"), V("bgp.neighbors.1.multiHop")],
  ],
  [
    "assigned LAN without address",
    (d) => Object.assign(iface(d, "lan1"), { IPv4: "", IPv4Mask: null }),
    // Its DHCP server and NAT rules lose their LAN.
    [V("interfaces.3.IPv4"), V("dhcp.1.interface"), V("firewall.rules.3.interface"), V("firewall.rules.4.interface")],
  ],
  [
    "address is the network address",
    (d) => {
      iface(d, "lan0").IPv4 = "192.168.10.0";
    },
    [V("interfaces.2.IPv4")],
  ],
  [
    "address is the broadcast address",
    (d) => {
      iface(d, "lan0").IPv4 = "192.168.10.255";
    },
    [V("interfaces.2.IPv4")],
  ],
  [
    "gateway outside the interface subnet",
    (d) => {
      iface(d, "wan0").gateway = "198.51.101.1";
    },
    [V("interfaces.0.gateway")],
  ],
  [
    "gateway is the interface's own address",
    (d) => {
      iface(d, "wan0").gateway = "198.51.100.2";
    },
    [V("interfaces.0.gateway")],
  ],
  [
    "subnet overlaps the tunnel range",
    (d) => Object.assign(iface(d, "wan1"), { IPv4: "10.200.7.2", gateway: "10.200.7.1" }),
    // The route via 203.0.113.1 lost its connected subnet too.
    [V("interfaces.1.IPv4"), V("staticRoutes.2.gateway"), V("bgp.neighbors.1.multiHop")],
  ],
  [
    "two interfaces with overlapping subnets",
    (d) => Object.assign(iface(d, "lan1"), { IPv4: "192.168.10.129", IPv4Mask: 25 }),
    [
      V("interfaces.3.IPv4"),
      V("dhcp.1.rangeStart"),
      V("dhcp.1.rangeEnd"),
      V("firewall.rules.3.source"),
      V("firewall.rules.4.source"),
    ],
  ],
  [
    "an unassigned interface is not checked",
    (d) => Object.assign(iface(d, "spare0"), { IPv4: "192.168.10.0", IPv4Mask: 24, gateway: "1.1.1.1" }),
    [],
  ],
  [
    "a DHCP-client WAN needs no address",
    (d) => Object.assign(iface(d, "wan1"), { dhcp: true, IPv4: "", IPv4Mask: null, gateway: "" }),
    [
      // With wan1's subnet unknown, "not connected" cannot be proven any more: only the ifname-bound and unreachable checks stay.
    ],
  ],
];

const dhcpRows: Row[] = [
  [
    "DHCP interface that does not exist",
    (d) => {
      d.dhcp[0]!.interface = "nope";
    },
    [V("dhcp.0.interface")],
  ],
  [
    "DHCP on a WAN interface",
    (d) => {
      d.dhcp[0]!.interface = "w0";
    },
    [V("dhcp.0.interface")],
  ],
  [
    "DHCP on an unassigned interface",
    (d) => {
      d.dhcp[0]!.interface = "s0";
    },
    [V("dhcp.0.interface")],
  ],
  [
    "two DHCP servers on one LAN",
    (d) => {
      d.dhcp[1]!.interface = "l0";
    },
    [V("dhcp.1.interface"), V("dhcp.1.rangeStart"), V("dhcp.1.rangeEnd")],
  ],
  [
    "range start outside the LAN subnet",
    (d) => {
      d.dhcp[0]!.rangeStart = "192.168.9.250";
    },
    [V("dhcp.0.rangeStart"), V("dhcp.0.rangeStart")],
  ],
  [
    "range end outside the LAN subnet",
    (d) => {
      d.dhcp[0]!.rangeEnd = "192.168.11.5";
    },
    [V("dhcp.0.rangeEnd")],
  ],
  [
    "range contains the interface address",
    (d) => {
      d.dhcp[0]!.rangeStart = "192.168.10.1";
    },
    [V("dhcp.0.rangeStart")],
  ],
  [
    "range starts at the network address",
    (d) => {
      d.dhcp[0]!.rangeStart = "192.168.10.0";
    },
    [V("dhcp.0.rangeStart"), V("dhcp.0.rangeStart")],
  ],
  [
    "range start after range end",
    (d) => Object.assign(d.dhcp[0]!, { rangeStart: "192.168.10.200", rangeEnd: "192.168.10.100" }),
    [V("dhcp.0.rangeEnd")],
  ],
  [
    "default lease longer than max lease",
    (d) => Object.assign(d.dhcp[0]!, { defaultLeaseTime: 90000 }),
    [V("dhcp.0.defaultLeaseTime")],
  ],
  [
    "reservation outside the subnet",
    (d) => {
      d.dhcp[0]!.macAssign[0]!.ipv4 = "192.168.11.20";
    },
    [V("dhcp.0.macAssign.0.ipv4")],
  ],
  [
    "reservation MAC twice (any case)",
    (d) => {
      d.dhcp[0]!.macAssign[1]!.mac = "02:00:00:00:00:01".toUpperCase();
    },
    [V("dhcp.0.macAssign.1.mac")],
  ],
  [
    "reservation address twice",
    (d) => {
      d.dhcp[0]!.macAssign[1]!.ipv4 = "192.168.10.20";
    },
    [V("dhcp.0.macAssign.1.ipv4")],
  ],
  [
    "reservation of the interface address",
    (d) => {
      d.dhcp[0]!.macAssign[0]!.ipv4 = "192.168.10.1";
    },
    [V("dhcp.0.macAssign.0.ipv4")],
  ],
  [
    "routers option that is not an address",
    (d) => {
      d.dhcp[0]!.options[0]!.value = "gateway.lan";
    },
    [V("dhcp.0.options.0.value")],
  ],
  [
    "routers option off the LAN",
    (d) => {
      d.dhcp[0]!.options[0]!.value = "10.0.0.1";
    },
    [V("dhcp.0.options.0.value")],
  ],
  [
    "interface-mtu out of range",
    (d) => {
      d.dhcp[0]!.options[2]!.value = "9";
    },
    [V("dhcp.0.options.2.value")],
  ],
  [
    "an option twice",
    (d) => {
      d.dhcp[0]!.options.push({ option: "routers", code: 3, value: "192.168.10.1" });
    },
    [V("dhcp.0.options.3.option")],
  ],
];

const routeRows: Row[] = [
  [
    "same destination and metric twice",
    (d) => {
      d.staticRoutes.push({ destination: "10.0.0.0/8", gateway: "198.51.100.1", ifname: "", metric: 0 });
    },
    [V("staticRoutes.4")],
  ],
  [
    "same destination, other metric",
    (d) => {
      d.staticRoutes.push({ destination: "10.0.0.0/8", gateway: "198.51.100.1", ifname: "", metric: 5 });
    },
    [],
  ],
  [
    "route on an interface that does not exist",
    (d) => {
      d.staticRoutes[0]!.ifname = "lan9";
    },
    [V("staticRoutes.0.ifname")],
  ],
  [
    "route on an unassigned interface",
    (d) => {
      d.staticRoutes[0]!.ifname = "spare0";
    },
    [V("staticRoutes.0.ifname")],
  ],
  [
    "gateway not on the named interface's subnet",
    (d) => {
      d.staticRoutes[0]!.gateway = "198.51.100.1";
    },
    [V("staticRoutes.0.gateway")],
  ],
  [
    "gateway on no connected subnet",
    (d) => {
      d.staticRoutes[1]!.gateway = "100.64.0.1";
    },
    [V("staticRoutes.1.gateway")],
  ],
  [
    "gateway is the device's own address",
    (d) => {
      d.staticRoutes[1]!.gateway = "198.51.100.2";
    },
    [V("staticRoutes.1.gateway")],
  ],
  [
    "an unknown gateway is accepted while a DHCP interface could reach it",
    (d) => {
      Object.assign(iface(d, "wan1"), { dhcp: true });
      d.staticRoutes[1]!.gateway = "100.64.0.1";
    },
    [],
  ],
];

const bgpRows: Row[] = [
  [
    "neighbor without multiHop",
    (d) => {
      delete d.bgp.neighbors[2]!.multiHop;
    },
    [V("bgp.neighbors.2.multiHop")],
  ],
  [
    "no local ASN",
    (d) => {
      d.bgp.localASN = null;
    },
    [V("bgp.localASN")],
  ],
  [
    "hold shorter than 3 keepalives",
    (d) => {
      d.bgp.holdInterval = 60;
    },
    [V("bgp.holdInterval")],
  ],
  [
    "neighbor twice",
    (d) => {
      d.bgp.neighbors[2]!.ip = "203.0.113.9";
    },
    [V("bgp.neighbors.2.ip")],
  ],
  [
    "single-hop neighbor that is not connected",
    (d) => {
      d.bgp.neighbors[2]!.multiHop = 1;
    },
    [V("bgp.neighbors.2.multiHop")],
  ],
  [
    "neighbor is the device's own address",
    (d) => {
      d.bgp.neighbors[1]!.ip = "203.0.113.2";
    },
    [V("bgp.neighbors.1.ip")],
  ],
  [
    "nothing is checked while BGP is disabled",
    (d) => {
      d.bgp.enable = false;
      delete d.bgp.neighbors[0]!.multiHop;
      d.bgp.localASN = null;
    },
    [],
  ],
];

const firewallRows: Row[] = [
  [
    "inbound rule on a LAN",
    (d) => {
      d.firewall.rules[0]!.interface = "l0";
    },
    [V("firewall.rules.0.interface")],
  ],
  [
    "outbound rule on a WAN",
    (d) => {
      d.firewall.rules[2]!.interface = "w1";
    },
    [V("firewall.rules.2.interface")],
  ],
  [
    "filter rule on a devId that does not exist",
    (d) => {
      d.firewall.rules[0]!.interface = "w7";
    },
    [V("firewall.rules.0.interface")],
  ],
  [
    "LAN NAT on a WAN",
    (d) => {
      d.firewall.rules[3]!.interface = "w0";
    },
    [V("firewall.rules.3.interface")],
  ],
  [
    "LAN NAT source outside its LAN",
    (d) => {
      d.firewall.rules[3]!.interface = "l0";
    },
    [V("firewall.rules.3.source")],
  ],
  [
    "LAN NAT prefixes of different length",
    (d) => Object.assign(d.firewall.rules[4]!, { translated: "10.21.0.0/24" }),
    [V("firewall.rules.4.translated")],
  ],
  [
    "LAN NAT translated prefixes overlap",
    (d) => Object.assign(d.firewall.rules[4]!, { translated: "10.20.0.0/25" }),
    [V("firewall.rules.4.translated")],
  ],
  [
    "LAN NAT sources overlap",
    (d) => Object.assign(d.firewall.rules[4]!, { source: "192.168.20.0/25" }),
    [V("firewall.rules.4.source")],
  ],
  [
    "LAN NAT translated onto one of the device's subnets",
    (d) => Object.assign(d.firewall.rules[4]!, { translated: "192.168.10.0/25" }),
    [V("firewall.rules.4.translated")],
  ],
];

describe.each([
  ["interfaces", interfaceRows],
  ["DHCP", dhcpRows],
  ["static routes", routeRows],
  ["BGP", bgpRows],
  ["firewall", firewallRows],
] as const)("%s", (_section, rows) => {
  it.each(rows)("%s", (_name, edit, expected) => {
    expect(codesAndPaths(edited(edit))).toEqual(expected);
  });
});

describe("messages say what is wrong in the admin's terms", () => {
  it("names the gateway and the subnet", () => {
    const [p] = validateDevice(
      edited((d) => {
        iface(d, "wan0").gateway = "198.51.101.1";
      }),
      context,
    );
    expect(p?.message).toBe("gateway 198.51.101.1 is outside the subnet 198.51.100.0/24 of wan0");
  });
  it("tells how to fix a single-hop neighbour far away", () => {
    const [p] = validateDevice(
      edited((d) => {
        d.bgp.neighbors[2]!.multiHop = 1;
      }),
      context,
    );
    expect(p?.message).toMatch(/192\.0\.2\.50 is not on a connected subnet: set multiHop/);
  });
});

describe("context", () => {
  it("checks interface path labels only when the organization's labels are given", () => {
    const d = edited((x) => {
      iface(x, "wan0").pathlabels = ["00000000-0000-4000-8000-000000000501"];
    });
    expect(validateDevice(d, context)).toEqual([]);
    expect(codesAndPaths(d, { ...context, pathLabelIds: [] })).toEqual([V("interfaces.0.pathlabels.0")]);
  });
  it("without a tunnel range, a gateway on a tunnel loopback is not connected", () => {
    expect(codesAndPaths(baseDevice(), {})).toEqual([V("staticRoutes.3.gateway"), V("bgp.neighbors.0.multiHop")]);
  });
});
