/**
 * Full DeviceConfigs for the two routers of the agent lab, from the
 * protocol's valid-full.json sample (interfaces, a static route, DHCP, eBGP
 * multihop, inbound firewall and LAN 1:1 NAT, two IKEv2 tunnels, VRRP, a
 * link-quality policy, management QoS), fitted to the lab as the agent's own
 * end-to-end test does. Router A keeps both tunnels: the device tunnel to
 * router B and the peer tunnel, whose far end is not in the lab (charon keeps
 * trying it, as it would for a peer that is down).
 */
import { readFileSync } from "node:fs";
import { type ConfigTunnel, DeviceConfig } from "@tern/protocol";
import type { LabRouter } from "./lab.ts";

export const DEVICE_TUNNEL_ID = "00000000-0000-4000-8000-000000000301";
const LABEL_1 = "00000000-0000-4000-8000-000000000501";
/** The tunnel loopbacks of router A and router B (a ping between them crosses the IKEv2 tunnel). */
export const TUNNEL_LOOPBACKS = { a: "10.100.0.4", b: "10.100.0.5" } as const;

function fullSample(): DeviceConfig {
  const url = new URL("../../../../packages/protocol/fixtures/v1/DeviceConfig/valid-full.json", import.meta.url);
  return DeviceConfig.parse(JSON.parse(readFileSync(url, "utf8")));
}

const monitoring = { probeIntervalMs: 500, windowSize: 20, downAfterMs: 3000, statusIntervalMs: 1000 };

export function routerAConfig(deviceId: string, r: LabRouter): DeviceConfig {
  const c = fullSample();
  c.deviceId = deviceId;
  c.interfaces = c.interfaces.map((i) => ({ ...i, devId: `mac:${r.macs[i.name]}` }));
  c.monitoring = monitoring;
  return DeviceConfig.parse(c);
}

export function routerBConfig(deviceId: string, r: LabRouter): DeviceConfig {
  const a = fullSample();
  const t = a.tunnels[0] as ConfigTunnel;
  const lan = a.dhcp[0]!;
  return DeviceConfig.parse({
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
    monitoring,
  });
}

/**
 * The one-field change: the port of router A's inbound firewall rule
 * (22 → 2222). It touches one driver's output (the nft ruleset), so its
 * raw-command baseline is a single `nft -f` of the new ruleset.
 */
export function oneFieldChange(c: DeviceConfig): DeviceConfig {
  const copy = structuredClone(c);
  const rule = copy.firewall.inbound[0];
  if (!rule) throw new Error("the config has no inbound firewall rule to change");
  rule.ports = rule.ports === "2222" ? "22" : "2222";
  return DeviceConfig.parse(copy);
}
