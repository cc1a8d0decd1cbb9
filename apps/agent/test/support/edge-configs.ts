/**
 * Full DeviceConfigs for the two routers of the end-to-end lab, built from
 * the protocol's valid-full.json sample (every section) and fitted to the
 * lab: one IKEv2 device tunnel with PFS between the routers, eBGP multihop
 * between their WAN addresses, LAN 1:1 NAT on each side of the tunnel, a
 * DHCP server with a reservation and VRRP on each LAN, a link-quality policy.
 */
import { type ConfigTunnel, DeviceConfig } from "@tern/protocol";
import { fullConfig } from "./configs.ts";
import type { EdgeRouter } from "./edge-lab.ts";

export const TUNNEL_ID = "00000000-0000-4000-8000-000000000301";
const LABEL_1 = "00000000-0000-4000-8000-000000000501";

export function routerAConfig(deviceId: string, r: EdgeRouter): DeviceConfig {
  const c = fullConfig();
  c.deviceId = deviceId;
  c.interfaces = c.interfaces.map((i) => ({ ...i, devId: `mac:${r.macs[i.name]}` }));
  const tunnel = c.tunnels[0] as ConfigTunnel;
  // The device tunnel to router B only (the sample's peer connection has no peer in this lab).
  c.tunnels = [{ ...tunnel, probeTargets: [tunnel.remoteLoopback] }];
  c.monitoring = { probeIntervalMs: 500, windowSize: 20, downAfterMs: 3000, statusIntervalMs: 1000 };
  return DeviceConfig.parse(c);
}

export function routerBConfig(deviceId: string, r: Pick<EdgeRouter, "macs">): DeviceConfig {
  const a = fullConfig();
  const t = a.tunnels[0] as ConfigTunnel;
  const lan = a.dhcp[0]!;
  const c: DeviceConfig = {
    ...a,
    deviceId,
    interfaces: [
      {
        devId: `mac:${r.macs.wan0}`,
        name: "wan0",
        type: "WAN",
        dhcp: false,
        address: "10.100.2.2/24",
        gateway: "10.100.2.1",
        metric: 0,
        mtu: 1500,
        pathLabels: [LABEL_1],
      },
      {
        devId: `mac:${r.macs.lan0}`,
        name: "lan0",
        type: "LAN",
        dhcp: false,
        address: "192.168.60.2/24",
        gateway: null,
        metric: 0,
        mtu: 1500,
        pathLabels: [],
      },
    ],
    routes: [{ destination: "172.17.0.0/16", gateway: "10.100.2.1", ifname: "wan0", metric: 10 }],
    dhcp: [
      {
        ...lan,
        subnet: "192.168.60.0/24",
        rangeStart: "192.168.60.100",
        rangeEnd: "192.168.60.199",
        dns: ["192.168.60.1"],
        options: lan.options.map((o) => (o.value === "192.168.50.1" ? { ...o, value: "192.168.60.1" } : o)),
        reservations: [{ host: "nas", mac: "02:00:00:00:0c:01", ipv4: "192.168.60.20", sendHostName: true }],
      },
    ],
    bgp: {
      asn: 65002,
      routerId: "10.100.0.3",
      keepalive: 3,
      hold: 9,
      neighbors: [{ ip: "10.100.1.2", remoteAsn: 65001, password: "", multiHop: 2, sendCommunity: false }],
      networks: ["192.168.60.0/24"],
    },
    firewall: {
      inbound: [],
      outbound: [],
      lanNat: [{ interface: "lan0", source: "192.168.60.0/24", translated: "10.60.0.0/24" }],
    },
    tunnels: [
      {
        ...t,
        localInterface: "wan0",
        localAddress: "10.100.2.2",
        remoteAddress: "10.100.1.2",
        localLoopback: t.remoteLoopback,
        remoteLoopback: t.localLoopback,
        auth: { psk: t.auth.psk, localId: t.auth.remoteId, remoteId: t.auth.localId },
        initiator: false,
        localSubnets: t.remoteSubnets,
        remoteSubnets: t.localSubnets,
        probeTargets: [t.localLoopback],
      },
    ],
    vrrp: [{ ...a.vrrp[0]!, groupId: "00000000-0000-4000-8000-000000000802", virtualRouterId: 52, virtualIp: "192.168.60.1" }],
    policy: { rules: [{ ...a.policy!.rules[0]!, pathLabels: [LABEL_1] }] },
    monitoring: { probeIntervalMs: 500, windowSize: 20, downAfterMs: 3000, statusIntervalMs: 1000 },
  };
  return DeviceConfig.parse(c);
}
