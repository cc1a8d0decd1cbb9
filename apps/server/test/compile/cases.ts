/** Named compile inputs whose outputs are pinned as golden files. */
import type { CompileInput } from "../../src/compile/index.ts";
import {
  device,
  deviceTunnel,
  edgeA,
  HQ_PEER,
  id,
  ORG,
  PATH_LABELS,
  PL_INET,
  PL_MPLS,
  peerTunnel,
  policy,
  sampleOrg,
  vrrpGroup,
} from "./fixtures.ts";

/** A device behind NAT: private WAN address, public address seen by the server. */
function natDevice() {
  return device({
    id: id(4),
    name: "edge-d",
    interfaces: [
      {
        id: id(0x401),
        devId: "pci:0000:00:03.0",
        name: "wan0",
        type: "WAN",
        isAssigned: true,
        IPv4: "192.168.1.10",
        IPv4Mask: 24,
        gateway: "192.168.1.1",
        PublicIP: "203.0.113.20",
        PublicPort: "4500",
      },
      { id: id(0x402), devId: "pci:0000:00:04.0", name: "lan0", type: "LAN", isAssigned: true, IPv4: "172.20.0.1", IPv4Mask: 22 },
    ],
  });
}

/** A branch with a DHCP-client WAN (address as last reported) talking to a GCM peer with FQDN identities. */
function gcmPeerInput(): CompileInput {
  const branch = device({
    id: id(5),
    name: "branch-e",
    interfaces: [
      {
        id: id(0x511),
        devId: "wan-dhcp",
        name: "enp1s0",
        type: "WAN",
        isAssigned: true,
        dhcp: true,
        IPv4: "100.64.3.7",
        IPv4Mask: 20,
      },
      { id: id(0x512), devId: "lan", name: "enp2s0", type: "LAN", isAssigned: true, IPv4: "10.9.0.1", IPv4Mask: 24 },
    ],
  });
  const peer = {
    ...HQ_PEER,
    id: id(0x702),
    name: "cloud-gw",
    idType: "fqdn" as const,
    localId: "branch-e.example.net",
    remoteIdType: "email" as const,
    remoteId: "vpn@cloud.example",
    remoteIP: "198.51.100.7",
    ips: ["172.16.9.9", "172.16.9.1", "172.16.9.1"],
    ikeCryptoAlg: "aes-gcm" as const,
    ikeKeySize: 128 as const,
    ikeIntegAlg: "sha384" as const,
    ikeDhGroup: "ecp384" as const,
    espCryptoAlg: "aes-gcm" as const,
    espKeySize: 256 as const,
    espDhGroup: "curve25519" as const,
    pfs: false,
    ikeLifeTime: 86400,
    sessionLifeTime: 7200,
    localTrafficSelectors: ["10.9.0.0/25", "10.9.0.128/25"],
    remoteTrafficSelectors: ["172.16.9.0/24", "172.16.0.0/16"],
    psk: "cloud-psk-abcdefgh",
  };
  return {
    device: branch,
    organization: ORG,
    tunnels: [peerTunnel(7, [branch, id(0x511)], peer)],
    vrrpGroups: [],
    multiLinkPolicy: null,
    pathLabels: PATH_LABELS,
    monitoring: { probeIntervalMs: 500, windowSize: 60 },
    prioritizeManagement: false,
  };
}

/** Everything that points at something missing: each part is left out with a warning. */
function danglingInput(): CompileInput {
  const a = edgeA();
  const lonely = device({
    id: id(6),
    name: "edge-f",
    interfaces: [
      { id: id(0x611), devId: "wan", name: "wan0", type: "WAN", isAssigned: true, pathlabels: [PL_MPLS, id(0x5ff)] },
      { id: id(0x612), devId: "lan", name: "lan0", type: "LAN", isAssigned: true, IPv4: "10.77.0.1", IPv4Mask: 24 },
      { id: id(0x613), devId: "spare", name: "spare0", type: "LAN", isAssigned: false, IPv4: "10.78.0.1", IPv4Mask: 24 },
    ],
    dhcp: [
      { interface: "spare", rangeStart: "10.78.0.10", rangeEnd: "10.78.0.20" },
      { interface: "lan", rangeStart: "10.77.0.10", rangeEnd: "10.77.0.20" },
      { interface: "lan", rangeStart: "10.77.0.30", rangeEnd: "10.77.0.40" },
    ],
    bgp: { enable: true, localASN: 65010, neighbors: [{ ip: "10.77.0.9", remoteASN: 65011, multiHop: 1 }] },
    firewall: {
      rules: [
        { direction: "inbound", action: "allow", interface: "gone", match: { protocol: "tcp", ports: "443" } },
        { direction: "lanNat", interface: "spare", source: "10.78.0.0/24", translated: "10.79.0.0/24" },
      ],
    },
    deviceSpecificRulesEnabled: true,
    policies: { multilink: POLICY_OTHER },
  });
  const group = vrrpGroup();
  return {
    device: lonely,
    organization: { id: ORG.id, tunnelRange: "10.200.0.0/24" },
    tunnels: [
      // The local WAN has no address yet: localAddress is null; edge-a's wan0 is behind NAT, so its public address is dialled.
      deviceTunnel(3, [lonely, id(0x611)], [a, id(0x101)]),
      // 200 does not fit a /24 tunnel range (127 tunnels).
      deviceTunnel(200, [lonely, id(0x611)], [a, id(0x103)]),
      // The local interface is a LAN.
      deviceTunnel(4, [a, id(0x103)], [lonely, id(0x612)]),
      // The tunnel's path label was deleted.
      peerTunnel(5, [lonely, id(0x611)], HQ_PEER, id(0x5fe)),
    ],
    vrrpGroups: [
      { ...group, devices: [{ ...(group.devices[0] as (typeof group.devices)[0]), device: id(6), interface: "spare" }] },
    ],
    multiLinkPolicy: policy(),
    pathLabels: PATH_LABELS,
  };
}
const POLICY_OTHER = id(0x602);

export const CASES: Record<string, () => CompileInput> = {
  "edge-a-hub": () => sampleOrg().inputFor(sampleOrg().a),
  "edge-b-spoke": () => {
    const org = sampleOrg();
    return org.inputFor(org.b);
  },
  "edge-c-vrrp-backup": () => {
    const org = sampleOrg();
    return org.inputFor(org.c);
  },
  "edge-a-rules-disabled": () => {
    const org = sampleOrg();
    return org.inputFor({ ...org.a, deviceSpecificRulesEnabled: false, bgp: { ...org.a.bgp, redistributeLan: false } });
  },
  "edge-a-to-nat-device": () => {
    const a = edgeA();
    const d = natDevice();
    return {
      device: a,
      organization: ORG,
      tunnels: [deviceTunnel(9, [a, id(0x101)], [d, id(0x401)], PL_MPLS)],
      vrrpGroups: [],
      multiLinkPolicy: policy(),
      pathLabels: PATH_LABELS,
    };
  },
  "nat-device-to-edge-a": () => {
    const a = edgeA();
    const d = natDevice();
    return {
      device: d,
      organization: ORG,
      tunnels: [deviceTunnel(9, [a, id(0x101)], [d, id(0x401)], PL_INET)],
      vrrpGroups: [],
      multiLinkPolicy: null,
      pathLabels: PATH_LABELS,
    };
  },
  "branch-gcm-peer": gcmPeerInput,
  "dangling-references": danglingInput,
  "bare-device": () => ({
    device: device({ id: id(7), name: "bare" }),
    organization: ORG,
    tunnels: [],
    vrrpGroups: [],
    multiLinkPolicy: null,
    pathLabels: [],
  }),
};
