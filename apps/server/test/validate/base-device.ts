/** A device with every section filled in and nothing wrong, built through the protocol schemas. */
import { Bgp, DeviceInterface, DhcpServer, Firewall, StaticRoute } from "@tern/protocol";

/** Mutable, fully typed sections (assignable to DeviceValidationInput), so tests can edit them. */
export interface TestDevice {
  interfaces: DeviceInterface[];
  staticRoutes: StaticRoute[];
  dhcp: DhcpServer[];
  bgp: Bgp;
  firewall: Firewall;
}

export const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
export const TUNNEL_RANGE = "10.200.0.0/16";

export function baseDevice(): TestDevice {
  return {
    interfaces: [
      { id: uuid(1), devId: "w0", name: "wan0", type: "WAN", IPv4: "198.51.100.2", IPv4Mask: 24, gateway: "198.51.100.1" },
      {
        id: uuid(2),
        devId: "w1",
        name: "wan1",
        type: "WAN",
        IPv4: "203.0.113.2",
        IPv4Mask: 24,
        gateway: "203.0.113.1",
        metric: 10,
      },
      { id: uuid(3), devId: "l0", name: "lan0", type: "LAN", IPv4: "192.168.10.1", IPv4Mask: 24 },
      { id: uuid(4), devId: "l1", name: "lan1", type: "LAN", IPv4: "192.168.20.1", IPv4Mask: 24 },
      { id: uuid(5), devId: "s0", name: "spare0", type: "NONE", isAssigned: false, IPv4: "192.168.10.7", IPv4Mask: 24 },
    ].map((i) => DeviceInterface.parse({ isAssigned: true, ...i })),
    staticRoutes: [
      { destination: "10.0.0.0/8", gateway: "192.168.10.254", ifname: "lan0" },
      { destination: "172.16.0.0/12", gateway: "198.51.100.1" },
      { destination: "172.16.0.0/12", gateway: "203.0.113.1", metric: 10 },
      // Via a remote tunnel loopback: inside the tunnel range, so reachable.
      { destination: "192.168.99.0/24", gateway: "10.200.0.5" },
    ].map((r) => StaticRoute.parse(r)),
    dhcp: [
      DhcpServer.parse({
        interface: "l0",
        rangeStart: "192.168.10.100",
        rangeEnd: "192.168.10.199",
        macAssign: [
          { host: "printer", mac: "02:00:00:00:00:01", ipv4: "192.168.10.20" },
          { host: "nas", mac: "02:00:00:00:00:02", ipv4: "192.168.10.150", useHostNameAsDhcpOption: true },
        ],
        options: [
          { option: "routers", code: 3, value: "192.168.10.1" },
          { option: "ntp-servers", code: 42, value: "192.168.10.1, 192.168.10.2" },
          { option: "interface-mtu", code: 26, value: "1400" },
        ],
      }),
      DhcpServer.parse({ interface: "l1", rangeStart: "192.168.20.10", rangeEnd: "192.168.20.20" }),
    ],
    bgp: Bgp.parse({
      enable: true,
      localASN: 65001,
      neighbors: [
        { ip: "10.200.0.5", remoteASN: 65002, multiHop: 1 },
        { ip: "203.0.113.9", remoteASN: 65003, multiHop: 1 },
        { ip: "192.0.2.50", remoteASN: 65004, multiHop: 4 },
      ],
    }),
    firewall: Firewall.parse({
      rules: [
        { direction: "inbound", action: "allow", interface: "w0", match: { protocol: "tcp", ports: "22" } },
        { direction: "inbound", action: "deny", interface: "" },
        { direction: "outbound", action: "deny", interface: "l0", match: { protocol: "tcp", ports: "25" } },
        { direction: "lanNat", interface: "l1", source: "192.168.20.0/25", translated: "10.20.0.0/25" },
        { direction: "lanNat", interface: "l1", source: "192.168.20.128/25", translated: "10.20.0.128/25" },
      ],
    }),
  };
}

/** A deep copy of the base device changed by `edit`. */
export function edited(edit: (d: TestDevice) => void): TestDevice {
  const d = structuredClone(baseDevice());
  edit(d);
  return d;
}
