/**
 * The compiled desired configuration of one device: what the server sends in
 * `apply` and what the agent reconciles the router to. It is a snapshot, not a
 * command list; its canonical-JSON hash identifies it on both sides.
 */

import { createHash } from "node:crypto";
import * as z from "zod";
import { Asn, CidrAddress, IfName, IPv4, Network } from "./common.ts";
import { BandwidthMbps, InterfaceType } from "./device.ts";
import { ConfigHealing } from "./healing.ts";
import { LinkQualityThresholds, PolicyMatch } from "./policy.ts";
import { ConfigLte, ConfigWifi } from "./radio.ts";
import { ConfigRemoteVpn } from "./remote-vpn.ts";

export const ConfigInterface = z.object({
  devId: z.string(),
  name: IfName,
  type: InterfaceType,
  /** DHCP client on this interface. */
  dhcp: z.boolean(),
  /** Static address with prefix ("192.168.1.1/24"), null when unset or dhcp. */
  address: CidrAddress.nullable(),
  gateway: IPv4.nullable(),
  metric: z.number().int().min(0),
  mtu: z.number().int().min(576).max(9000),
  pathLabels: z.array(z.string()),
  /**
   * The line's rates as the admin set them. Management QoS shapes WAN egress
   * to 95 % of `tx` so the queue forms on the router, where the control link
   * and probes can be served first. Absent or null: no shaping, priority only.
   */
  bandwidthMbps: BandwidthMbps.nullable().optional(),
  /** A cellular modem to bring up on this interface (ModemManager). Absent: not a modem the agent drives. */
  lte: ConfigLte.optional(),
  /** A WiFi access point on this interface (hostapd). Absent: no access point. */
  wifi: ConfigWifi.optional(),
});
export type ConfigInterface = z.infer<typeof ConfigInterface>;

export const ConfigRoute = z.object({
  destination: Network,
  gateway: IPv4,
  ifname: IfName.nullable(),
  metric: z.number().int().min(0),
});
export type ConfigRoute = z.infer<typeof ConfigRoute>;

export const ConfigDhcpServer = z.object({
  interface: IfName,
  subnet: Network,
  rangeStart: IPv4,
  rangeEnd: IPv4,
  dns: z.array(IPv4),
  /** Options with their codes; `routers` is the VRRP virtual IP in a VRRP group. */
  options: z.array(z.object({ code: z.number().int().min(1).max(254), name: z.string(), value: z.string() })),
  reservations: z.array(z.object({ host: z.string(), mac: z.string(), ipv4: IPv4, sendHostName: z.boolean() })),
  defaultLeaseTime: z.number().int().min(60),
  maxLeaseTime: z.number().int().min(60),
});
export type ConfigDhcpServer = z.infer<typeof ConfigDhcpServer>;

export const ConfigBgp = z.object({
  asn: Asn,
  routerId: IPv4,
  keepalive: z.number().int().min(1),
  hold: z.number().int().min(3),
  neighbors: z.array(
    z.object({
      ip: IPv4,
      remoteAsn: Asn,
      password: z.string(),
      /** TTL for eBGP multihop; 1 = directly connected. */
      multiHop: z.number().int().min(1).max(255),
      sendCommunity: z.boolean(),
    }),
  ),
  /** Prefixes announced: LAN subnets and the tunnel loopbacks. */
  networks: z.array(Network),
});
export type ConfigBgp = z.infer<typeof ConfigBgp>;

export const ConfigFilterRule = z.object({
  priority: z.number().int(),
  action: z.enum(["allow", "deny"]),
  /** Interface name, null = all interfaces of the direction. */
  interface: IfName.nullable(),
  protocol: z.enum(["any", "tcp", "udp", "icmp"]),
  source: Network.nullable(),
  destination: Network.nullable(),
  ports: z.string().nullable(),
});
export type ConfigFilterRule = z.infer<typeof ConfigFilterRule>;

export const ConfigFirewall = z.object({
  inbound: z.array(ConfigFilterRule),
  outbound: z.array(ConfigFilterRule),
  lanNat: z.array(z.object({ interface: IfName, source: Network, translated: Network })),
});
export type ConfigFirewall = z.infer<typeof ConfigFirewall>;

export const IkeParams = z.object({
  /** strongSwan proposal, e.g. "aes256-sha256-modp2048". */
  proposal: z.string(),
  lifetimeSeconds: z.number().int().min(60),
});
export const EspParams = z.object({
  /** strongSwan ESP proposal; carries a DH group when `pfs` is on. */
  proposal: z.string(),
  lifetimeSeconds: z.number().int().min(60),
  pfs: z.boolean(),
});

export const ConfigTunnel = z.object({
  id: z.string(),
  num: z.number().int().min(0),
  kind: z.enum(["device", "peer"]),
  /** WAN interface the tunnel leaves from; its own address is the IKE source. */
  localInterface: IfName,
  /** The interface's address when known by the server; the agent uses the live one. */
  localAddress: IPv4.nullable(),
  remoteAddress: IPv4,
  /** /31 loopback ends from the organization's tunnel range. */
  localLoopback: IPv4,
  remoteLoopback: IPv4,
  ike: IkeParams,
  esp: EspParams,
  auth: z.object({ psk: z.string(), localId: z.string(), remoteId: z.string() }),
  /** True on the side that starts the IKE SA (device A, always for peers). */
  initiator: z.boolean(),
  dpdSeconds: z.number().int().min(0),
  /** IKE version; absent = 2 (only peers that speak IKEv1 only set 1). */
  ikeVersion: z.union([z.literal(1), z.literal(2)]).optional(),
  /**
   * The tunnel also carries internet-bound traffic of a multi-link policy's
   * `peer` action (cloud security): the CHILD_SA's remote selector adds
   * 0.0.0.0/0, which is never routed in the main table; the policy driver
   * steers only the traffic that would take the default route. Absent = false.
   */
  internet: z.boolean().optional(),
  /** Traffic selectors: what goes through this tunnel besides the loopbacks. */
  localSubnets: z.array(Network),
  remoteSubnets: z.array(Network),
  /** Targets probed for quality: the remote loopback for device tunnels, health-check IPs for peers. */
  probeTargets: z.array(IPv4),
  pathLabel: z.string().nullable(),
});
export type ConfigTunnel = z.infer<typeof ConfigTunnel>;

export const ConfigVrrp = z.object({
  groupId: z.string(),
  virtualRouterId: z.number().int().min(1).max(255),
  interface: IfName,
  virtualIp: IPv4,
  prefix: z.number().int().min(0).max(32),
  priority: z.number().int().min(1).max(255),
  preemption: z.boolean(),
  acceptMode: z.boolean(),
  advertIntervalMs: z.number().int().min(10),
  trackOptional: z.array(IfName),
  trackMandatory: z.array(IfName),
});
export type ConfigVrrp = z.infer<typeof ConfigVrrp>;

export const ConfigPolicyRule = z.object({
  name: z.string(),
  priority: z.number().int(),
  match: PolicyMatch,
  order: z.enum(["priority", "link-quality"]),
  /** Path label ids in order of preference; links are the WAN interfaces and tunnels carrying them. */
  pathLabels: z.array(z.string()),
  /**
   * A `peer` action (cloud security): the ids of this device's tunnels to the
   * peer, in preference order, instead of path labels. Only traffic that would
   * take the default route (internet-bound) follows the rule. Absent = path labels.
   */
  tunnels: z.array(z.string()).min(1).optional(),
  fallback: z.enum(["by-destination", "drop"]),
  linkQuality: LinkQualityThresholds.nullable(),
});
export type ConfigPolicyRule = z.infer<typeof ConfigPolicyRule>;

export const ConfigMonitoring = z.object({
  probeIntervalMs: z.number().int().min(100).max(60000),
  /** Loss is computed over this many probes. */
  windowSize: z.number().int().min(5).max(600),
  /** A tunnel is down after this long without a reply. */
  downAfterMs: z.number().int().min(1000),
  statusIntervalMs: z.number().int().min(1000).max(300000),
});
export type ConfigMonitoring = z.infer<typeof ConfigMonitoring>;

/**
 * Five probes a second over a sliding minute: 300 samples give a loss
 * estimate with a binomial σ of 1.3 points at 5 %, where the former 30-probe
 * window had 4 (single reports from 3 % to 20 % at 10 % loss).
 */
export const DEFAULT_MONITORING: ConfigMonitoring = {
  probeIntervalMs: 200,
  windowSize: 300,
  downAfterMs: 15000,
  statusIntervalMs: 5000,
};

export const DeviceConfig = z.object({
  deviceId: z.string(),
  interfaces: z.array(ConfigInterface),
  routes: z.array(ConfigRoute),
  dhcp: z.array(ConfigDhcpServer),
  bgp: ConfigBgp.nullable(),
  firewall: ConfigFirewall,
  tunnels: z.array(ConfigTunnel),
  vrrp: z.array(ConfigVrrp),
  policy: z.object({ rules: z.array(ConfigPolicyRule) }).nullable(),
  monitoring: ConfigMonitoring,
  /** Mark and prioritise the control link and probes ahead of bulk traffic. */
  qos: z.object({ prioritizeManagement: z.boolean() }),
  /** Healing mode and degraded links to avoid; absent = mode `act`, nothing avoided (docs/healing.md). */
  healing: ConfigHealing.optional(),
  /**
   * IKEv2 remote access of the remote worker VPN application. Absent (not
   * null) when the device does not run it, so configs without it keep their hash.
   */
  remoteVpn: ConfigRemoteVpn.optional(),
});
export type DeviceConfig = z.infer<typeof DeviceConfig>;

/** An empty config: applying it tears everything the agent owns down. */
export function emptyDeviceConfig(deviceId: string): DeviceConfig {
  return {
    deviceId,
    interfaces: [],
    routes: [],
    dhcp: [],
    bgp: null,
    firewall: { inbound: [], outbound: [], lanNat: [] },
    tunnels: [],
    vrrp: [],
    policy: null,
    monitoring: DEFAULT_MONITORING,
    qos: { prioritizeManagement: true },
  };
}

/**
 * Canonical JSON: object keys sorted (recursively), arrays in order, no
 * whitespace, `undefined` members dropped. Equal values give equal text.
 */
export function canonicalJson(value: unknown): string {
  // Built in one pass, without the arrays of entries, pairs and parts a map/filter/join version makes: a config
  // hash is taken at every compile (a fan-out to 10,000 devices hashes 10,000 configs). The sort is the default
  // one (UTF-16 code units), as `a < b` compares; test/hash.test.ts checks the text against that definition.
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("canonicalJson: non-finite number");
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out += `${i > 0 ? "," : ""}${v === undefined ? "null" : canonicalJson(v)}`;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = record[k];
    if (v === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** The stable hash of a config: sha256 hex of its canonical JSON. */
export function configHash(config: DeviceConfig): string {
  return canonicalJsonHash(canonicalJson(config));
}

/** `configHash` of a config whose canonical JSON is `json` (a caller that keeps the text hashes it once). */
export function canonicalJsonHash(json: string): string {
  return createHash("sha256").update(json).digest("hex");
}
