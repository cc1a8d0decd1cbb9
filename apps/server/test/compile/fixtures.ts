/**
 * A small sample organization for compile tests, built through the protocol
 * schemas (so defaults apply as in the API) and starting from the protocol's
 * own fixtures where one exists.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Device, DeviceInterface, MlPolicyCreate, PeerCreate, VrrpGroupCreate } from "@tern/protocol";
import type { z } from "zod";
import type {
  CompileDevice,
  CompileInput,
  CompilePeer,
  CompileVrrpGroup,
  DeviceTunnelInput,
  PeerTunnelInput,
} from "../../src/compile/index.ts";

const fixtureDir = join(import.meta.dirname, "..", "..", "..", "..", "packages", "protocol", "fixtures", "v1");
function protocolFixture(schema: string, file: string): unknown {
  return JSON.parse(readFileSync(join(fixtureDir, schema, file), "utf8"));
}

/** UUIDs that say what they are: id(0x101) = "00000000-0000-4000-8000-000000000101". */
export const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

export const ORG = { id: id(0x900), tunnelRange: "10.200.0.0/16" };
export const PL_MPLS = id(0x501);
export const PL_INET = id(0x502);
export const POLICY_ID = id(0x601);
export const PATH_LABELS = [{ id: PL_MPLS }, { id: PL_INET }];

type IfaceIn = z.input<typeof DeviceInterface>;
export const iface = (fields: Partial<IfaceIn> & Pick<IfaceIn, "id" | "devId" | "name">) =>
  DeviceInterface.parse({ isAssigned: true, ...fields });

/** A device with schema defaults for every section not given. */
export function device(fields: Partial<z.input<typeof Device>> & { id: string; name: string }): CompileDevice {
  return Device.pick({
    id: true,
    name: true,
    interfaces: true,
    staticRoutes: true,
    dhcp: true,
    bgp: true,
    firewall: true,
    deviceSpecificRulesEnabled: true,
    policies: true,
  }).parse({
    interfaces: [],
    staticRoutes: [],
    dhcp: [],
    bgp: {},
    firewall: {},
    deviceSpecificRulesEnabled: false,
    policies: { multilink: null },
    ...fields,
  });
}

/** edge-a: the protocol's full Device fixture plus a second WAN, an unassigned port, an outbound rule and a policy. */
export function edgeA(): CompileDevice {
  const base = Device.parse(protocolFixture("Device", "valid-full.json"));
  return {
    ...base,
    interfaces: [
      ...base.interfaces,
      iface({
        id: id(0x103),
        devId: "mac:02:00:00:00:0a:03",
        name: "wan1",
        type: "WAN",
        IPv4: "10.101.1.2",
        IPv4Mask: 24,
        gateway: "10.101.1.1",
        metric: 10,
        pathlabels: [PL_INET],
      }),
      iface({ id: id(0x104), devId: "mac:02:00:00:00:0a:09", name: "eth9", isAssigned: false }),
    ],
    firewall: {
      rules: [
        ...base.firewall.rules,
        {
          direction: "outbound",
          description: "no smtp out",
          priority: 5,
          enabled: true,
          action: "deny",
          interface: "mac:02:00:00:00:0a:02",
          match: { protocol: "tcp", source: "", destination: "", ports: "25" },
        },
        {
          direction: "inbound",
          description: "disabled",
          priority: 1,
          enabled: false,
          action: "allow",
          interface: "",
          match: { protocol: "any", source: "", destination: "", ports: "" },
        },
      ],
    },
    policies: { multilink: POLICY_ID },
  };
}

/** edge-b: one WAN, a LAN translated by 1:1 NAT, BGP with a multihop neighbour over the tunnel. */
export function edgeB(): CompileDevice {
  return device({
    id: id(2),
    name: "edge-b",
    interfaces: [
      {
        id: id(0x201),
        devId: "mac:02:00:00:00:0b:01",
        name: "wan0",
        type: "WAN",
        isAssigned: true,
        IPv4: "10.100.2.2",
        IPv4Mask: 24,
        gateway: "10.100.2.1",
        pathlabels: [PL_MPLS],
      },
      {
        id: id(0x202),
        devId: "mac:02:00:00:00:0b:02",
        name: "lan0",
        type: "LAN",
        isAssigned: true,
        IPv4: "192.168.60.1",
        IPv4Mask: 24,
      },
    ],
    dhcp: [{ interface: "mac:02:00:00:00:0b:02", rangeStart: "192.168.60.100", rangeEnd: "192.168.60.150" }],
    bgp: {
      enable: true,
      localASN: 65002,
      neighbors: [{ ip: "10.200.0.4", remoteASN: 65001, multiHop: 2 }],
    },
    firewall: {
      rules: [{ direction: "lanNat", interface: "mac:02:00:00:00:0b:02", source: "192.168.60.0/24", translated: "10.60.0.0/24" }],
    },
  });
}

/** edge-c: the VRRP backup on edge-a's LAN segment. */
export function edgeC(): CompileDevice {
  return device({
    id: id(3),
    name: "edge-c",
    interfaces: [
      {
        id: id(0x301),
        devId: "mac:02:00:00:00:0c:01",
        name: "wan0",
        type: "WAN",
        isAssigned: true,
        IPv4: "10.100.3.2",
        IPv4Mask: 24,
        gateway: "10.100.3.1",
      },
      {
        id: id(0x302),
        devId: "mac:02:00:00:00:0c:02",
        name: "lan0",
        type: "LAN",
        isAssigned: true,
        IPv4: "192.168.50.3",
        IPv4Mask: 24,
      },
    ],
    dhcp: [
      {
        interface: "mac:02:00:00:00:0c:02",
        rangeStart: "192.168.50.200",
        rangeEnd: "192.168.50.220",
        options: [{ option: "routers", code: 3, value: "192.168.50.3" }],
      },
    ],
  });
}

export const HQ_PEER: CompilePeer = { ...PeerCreate.parse(protocolFixture("PeerCreate", "valid-pfs.json")), id: id(0x701) };

/** The protocol's VRRP pair fixture, re-pointed at edge-a and edge-c's shared LAN. */
export function vrrpGroup(): CompileVrrpGroup {
  const base = VrrpGroupCreate.parse(protocolFixture("VrrpGroupCreate", "valid-pair.json"));
  return {
    ...base,
    id: id(0x801),
    virtualIp: "192.168.50.254",
    devices: [
      { ...(base.devices[0] as (typeof base.devices)[0]), device: id(1) },
      {
        ...(base.devices[1] as (typeof base.devices)[1]),
        device: id(3),
        interface: "mac:02:00:00:00:0c:02",
        trackInterfacesOptional: ["mac:02:00:00:00:0c:01"],
      },
    ],
  };
}

export function policy() {
  return { ...MlPolicyCreate.parse(protocolFixture("MlPolicyCreate", "valid-link-quality.json")), id: POLICY_ID };
}

export function deviceTunnel(
  num: number,
  a: [CompileDevice, string],
  b: [CompileDevice, string],
  pathlabel: string | null = null,
): DeviceTunnelInput {
  return {
    kind: "device",
    id: id(0x1000 + num),
    num,
    pathlabel,
    psk: `generated-tunnel-secret-${num}`,
    a: { device: a[0], interfaceId: a[1] },
    b: { device: b[0], interfaceId: b[1] },
  };
}

export function peerTunnel(
  num: number,
  a: [CompileDevice, string],
  peer: CompilePeer,
  pathlabel: string | null = null,
): PeerTunnelInput {
  return { kind: "peer", id: id(0x1000 + num), num, pathlabel, a: { device: a[0], interfaceId: a[1] }, peer };
}

/** The whole sample org: three devices, two device tunnels, one peer tunnel, one VRRP group, one policy. */
export function sampleOrg() {
  const a = edgeA();
  const b = edgeB();
  const c = edgeC();
  const tunnels = [
    deviceTunnel(1, [a, id(0x101)], [b, id(0x201)], PL_MPLS),
    peerTunnel(2, [a, id(0x103)], HQ_PEER, PL_INET),
    // Number 130 lands in the second 256-address block of the range; edge-c is side B.
    deviceTunnel(130, [b, id(0x201)], [c, id(0x301)]),
  ];
  const groups = [vrrpGroup()];
  const inputFor = (d: CompileDevice): CompileInput => ({
    device: d,
    organization: ORG,
    tunnels: tunnels.filter((t) => t.a.device.id === d.id || (t.kind === "device" && t.b.device.id === d.id)),
    vrrpGroups: groups.filter((g) => g.devices.some((m) => m.device === d.id)),
    multiLinkPolicy: d.policies.multilink === POLICY_ID ? policy() : null,
    pathLabels: PATH_LABELS,
  });
  return { a, b, c, tunnels, groups, inputFor };
}
