/** The device resource: interfaces, static routes, DHCP, BGP and firewall with LAN NAT. */
import * as z from "zod";
import { Asn, Description, Hostname, Id, IfName, IPv4, Mac, Name, Network, PortRange, Timestamp } from "./common.ts";
import { DataPlaneState, DeviceTags } from "./device-actions.ts";
import { parseIPv4 } from "./ip.ts";
import { LteSettings, WifiSettings } from "./radio.ts";

export const InterfaceType = z.enum(["WAN", "LAN", "NONE"]);
export const InterfaceRouting = z.enum(["NONE", "BGP"]);
export const InterfaceDeviceType = z.enum(["ethernet", "lte", "wifi"]);

export const BandwidthMbps = z.object({
  tx: z.number().positive().max(1_000_000).default(100),
  rx: z.number().positive().max(1_000_000).default(100),
});

/** A device interface as an admin configures it. */
export const DeviceInterface = z.object({
  /** Server-assigned id, stable across renames; `{interfaceId}` in URLs. */
  id: Id,
  /** The agent's hardware identity of the interface (e.g. its MAC or bus path). */
  devId: z.string().min(1).max(200),
  name: IfName,
  deviceType: InterfaceDeviceType.default("ethernet"),
  type: InterfaceType.default("NONE"),
  isAssigned: z.boolean().default(false),
  /** DHCP client on this interface (WAN) instead of a static address. */
  dhcp: z.boolean().default(false),
  IPv4: IPv4.or(z.literal("")).default(""),
  IPv4Mask: z.number().int().min(0).max(32).nullable().default(null),
  gateway: IPv4.or(z.literal("")).default(""),
  metric: z.number().int().min(0).max(65535).default(0),
  mtu: z.number().int().min(576).max(9000).default(1500),
  routing: InterfaceRouting.default("NONE"),
  /** Public address and port seen from the server; read-only. */
  PublicIP: z.string().default(""),
  PublicPort: z.string().default(""),
  /** Path label ids attached to a WAN interface. */
  pathlabels: z.array(Id).default([]),
  bandwidthMbps: BandwidthMbps.default({ tx: 100, rx: 100 }),
  /** Read-only: set when public IP/port changes of this interface are being throttled. */
  isPublicAddressRateLimited: z.boolean().default(false),
  /** Modem settings; only on `deviceType: "lte"` interfaces. Secrets are write-only (./radio.ts). */
  lte: LteSettings.nullable().optional(),
  /** Access point settings; only on `deviceType: "wifi"` interfaces. The passphrase is write-only. */
  wifi: WifiSettings.nullable().optional(),
});
export type DeviceInterface = z.infer<typeof DeviceInterface>;

export const StaticRoute = z.object({
  destination: Network,
  gateway: IPv4,
  /** Interface name; optional when the gateway is on a connected subnet. */
  ifname: IfName.or(z.literal("")).default(""),
  metric: z.number().int().min(0).max(65535).default(0),
});
export type StaticRoute = z.infer<typeof StaticRoute>;

/** Options the DHCP server hands out, by name with their DHCP codes. */
export const DHCP_OPTION_CODES = {
  routers: 3,
  "time-offset": 2,
  "domain-name-servers": 6,
  "domain-name": 15,
  "interface-mtu": 26,
  "ntp-servers": 42,
  "tftp-server-name": 66,
} as const;
export type DhcpOptionName = keyof typeof DHCP_OPTION_CODES;

export const DhcpOption = z
  .object({
    option: z.enum(Object.keys(DHCP_OPTION_CODES) as [DhcpOptionName, ...DhcpOptionName[]]),
    code: z.number().int().min(1).max(254),
    value: z.string().min(1).max(255),
  })
  .refine((o) => DHCP_OPTION_CODES[o.option] === o.code, {
    message: "code does not match the option name",
    path: ["code"],
  });
export type DhcpOption = z.infer<typeof DhcpOption>;

export const MacAssign = z.object({
  host: z.string().regex(/^[A-Za-z0-9-]{1,63}$/, "must be a host name label"),
  mac: Mac,
  ipv4: IPv4,
  /** Send `host` to the client as its host name (option 12). */
  useHostNameAsDhcpOption: z.boolean().default(false),
});
export type MacAssign = z.infer<typeof MacAssign>;

/** A DHCP server on one LAN interface. */
export const DhcpServer = z
  .object({
    /** The LAN interface's devId. */
    interface: z.string().min(1),
    rangeStart: IPv4,
    rangeEnd: IPv4,
    dns: z.array(IPv4).max(8).default([]),
    macAssign: z.array(MacAssign).default([]),
    options: z.array(DhcpOption).default([]),
    /** Lease time in seconds given when the client asks for none. */
    defaultLeaseTime: z.number().int().min(60).max(31_536_000).default(43200),
    /** Longest lease time in seconds granted, whatever the client asks. */
    maxLeaseTime: z.number().int().min(60).max(31_536_000).default(86400),
  })
  .refine((d) => d.defaultLeaseTime <= d.maxLeaseTime, {
    message: "defaultLeaseTime must not exceed maxLeaseTime",
    path: ["defaultLeaseTime"],
  })
  .refine((d) => (parseIPv4(d.rangeStart) ?? 0) <= (parseIPv4(d.rangeEnd) ?? 0), {
    message: "rangeStart must not be after rangeEnd",
    path: ["rangeEnd"],
  });
export type DhcpServer = z.infer<typeof DhcpServer>;

export const BgpNeighbor = z.object({
  ip: IPv4,
  remoteASN: Asn,
  password: z.string().max(80).default(""),
  /** eBGP multihop TTL (1 = directly connected). Required whenever BGP is enabled (6.3.1). */
  multiHop: z.number().int().min(1).max(255).optional(),
  sendCommunity: z.boolean().default(false),
  inboundFilter: z.string().max(100).default(""),
  outboundFilter: z.string().max(100).default(""),
});
export type BgpNeighbor = z.infer<typeof BgpNeighbor>;

export const Bgp = z
  .object({
    enable: z.boolean().default(false),
    routerId: IPv4.or(z.literal("")).default(""),
    localASN: Asn.nullable().default(null),
    keepaliveInterval: z.number().int().min(1).max(21845).default(30),
    holdInterval: z.number().int().min(3).max(65535).default(90),
    /** Announce the device's LAN subnets and tunnel loopbacks. */
    redistributeLan: z.boolean().default(true),
    neighbors: z.array(BgpNeighbor).max(64).default([]),
  })
  .superRefine((b, ctx) => {
    if (!b.enable) return;
    if (b.localASN === null)
      ctx.addIssue({ code: "custom", path: ["localASN"], message: "localASN is required when BGP is enabled" });
    if (b.holdInterval < b.keepaliveInterval * 3)
      ctx.addIssue({ code: "custom", path: ["holdInterval"], message: "holdInterval must be at least 3 × keepaliveInterval" });
    b.neighbors.forEach((n, i) => {
      if (n.multiHop === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["neighbors", i, "multiHop"],
          message: "multiHop is required on every neighbor when BGP is enabled (6.3.1)",
        });
    });
  });
export type Bgp = z.infer<typeof Bgp>;

const FirewallMatch = z.object({
  protocol: z.enum(["any", "tcp", "udp", "icmp"]).default("any"),
  source: Network.or(z.literal("")).default(""),
  destination: Network.or(z.literal("")).default(""),
  ports: PortRange.or(z.literal("")).default(""),
});

/** Inbound (to the device from WAN) or outbound (LAN to anywhere) filter rule. */
export const FilterRule = z.object({
  direction: z.enum(["inbound", "outbound"]),
  description: z.string().max(200).default(""),
  priority: z.number().int().min(0).max(10000).default(100),
  enabled: z.boolean().default(true),
  action: z.enum(["allow", "deny"]),
  /** Interface devId the rule applies to; "" = every interface of the direction. */
  interface: z.string().default(""),
  match: FirewallMatch.default({ protocol: "any", source: "", destination: "", ports: "" }),
});
export type FilterRule = z.infer<typeof FilterRule>;

/** LAN 1:1 NAT (6.3.1): a source prefix on a LAN interface maps 1:1 to a translated prefix of the same length. */
export const LanNatRule = z.object({
  direction: z.literal("lanNat"),
  description: z.string().max(200).default(""),
  enabled: z.boolean().default(true),
  /** The LAN interface's devId. */
  interface: z.string().min(1),
  source: Network,
  translated: Network,
});
export type LanNatRule = z.infer<typeof LanNatRule>;

export const FirewallRule = z.discriminatedUnion("direction", [
  FilterRule.extend({ direction: z.literal("inbound") }),
  FilterRule.extend({ direction: z.literal("outbound") }),
  LanNatRule,
]);
export type FirewallRule = z.infer<typeof FirewallRule>;

export const Firewall = z.object({ rules: z.array(FirewallRule).max(1000).default([]) }).superRefine((fw, ctx) => {
  fw.rules.forEach((r, i) => {
    if (r.direction === "lanNat" && r.source.split("/")[1] !== r.translated.split("/")[1])
      ctx.addIssue({
        code: "custom",
        path: ["rules", i, "translated"],
        message: "translated prefix must have the same length as the source prefix",
      });
  });
});
export type Firewall = z.infer<typeof Firewall>;

/** Connection state of a device as the server sees it. */
export const DeviceConnection = z.enum(["connected", "disconnected", "never"]);

const deviceFields = {
  id: Id,
  org: Id,
  name: Name,
  description: Description,
  hostname: Hostname,
  machineId: z.string(),
  isApproved: z.boolean(),
  connection: DeviceConnection,
  isConnected: z.boolean(),
  versions: z.object({ agent: z.string(), protocol: z.number().int() }),
  interfaces: z.array(DeviceInterface),
  staticRoutes: z.array(StaticRoute),
  dhcp: z.array(DhcpServer),
  bgp: Bgp,
  firewall: Firewall,
  /** Device-specific inbound/outbound filter rules take effect (spelling fixed in 5.1.1). */
  deviceSpecificRulesEnabled: z.boolean(),
  policies: z.object({ multilink: Id.nullable() }),
  /** Free-form tags (filter with `{"key":"tags","op":"contains","val":"x"}`). */
  tags: z.array(z.string()).default([]),
  /** `stopped` after a `stop` action the device acknowledged, until `start`. */
  dataPlane: DataPlaneState.default("running"),
  /** Count of unread, unresolved notifications of this device. */
  pendingNotifications: z.number().int().min(0),
  /** Hash of the config the server wants on the device, and the one it last reported. */
  desiredHash: z.string().nullable(),
  appliedHash: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastConnectedAt: Timestamp.nullable(),
};

export const Device = z.object(deviceFields);
export type Device = z.infer<typeof Device>;

/** The small list shape of `GET /devices?response=summary`. */
export const DeviceSummary = Device.pick({
  id: true,
  name: true,
  hostname: true,
  isApproved: true,
  isConnected: true,
  pendingNotifications: true,
  tags: true,
}).extend({
  interfaces: z.array(
    DeviceInterface.pick({ id: true, name: true, type: true, IPv4: true, IPv4Mask: true, isPublicAddressRateLimited: true }),
  ),
});
export type DeviceSummary = z.infer<typeof DeviceSummary>;

/** Interface fields an admin may write; matched to the device's interfaces by `devId`. Read-only fields sent back are ignored. */
export const DeviceInterfaceUpdate = DeviceInterface.omit({
  PublicIP: true,
  PublicPort: true,
  isPublicAddressRateLimited: true,
}).extend({
  id: Id.optional(),
});
export type DeviceInterfaceUpdate = z.infer<typeof DeviceInterfaceUpdate>;

/** Body of `PUT /devices/{id}`: every field optional; absent fields stay as they are; unknown fields are ignored. */
export const DeviceUpdate = z.object({
  name: Name.optional(),
  description: z.string().max(1000).optional(),
  isApproved: z.boolean().optional(),
  interfaces: z.array(DeviceInterfaceUpdate).max(64).optional(),
  staticRoutes: z.array(StaticRoute).max(1000).optional(),
  dhcp: z.array(DhcpServer).max(64).optional(),
  bgp: Bgp.optional(),
  firewall: Firewall.optional(),
  deviceSpecificRulesEnabled: z.boolean().optional(),
  /** The pre-5.1.1 spelling: refused with a message naming the new field. */
  deviceSpecifficRulesEnabled: z
    .never({
      error: "deviceSpecifficRulesEnabled was renamed to deviceSpecificRulesEnabled in 5.1.1; send deviceSpecificRulesEnabled",
    })
    .optional(),
  policies: z.object({ multilink: Id.nullable() }).optional(),
  /** The device's whole tag list (replaces it): trimmed, 1–64 characters of [A-Za-z0-9._:/-], at most 32, deduplicated. */
  tags: DeviceTags.optional(),
});
export type DeviceUpdate = z.infer<typeof DeviceUpdate>;

/** Query of `PUT /devices/{id}`: `allowOverlapping=true` permits a LAN subnet that overlaps another device's. */
export const DeviceUpdateQuery = z.object({
  allowOverlapping: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
});

/** Query of `DELETE /devices` and `DELETE /devices/{id}`. */
export const RemoveVrrpQuery = z.object({
  removeVrrp: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
});

/** An interface address "IPv4/IPv4Mask" as one CIDR string, or null when unset. */
export function interfaceCidr(i: Pick<DeviceInterface, "IPv4" | "IPv4Mask">): string | null {
  return i.IPv4 && i.IPv4Mask !== null ? `${i.IPv4}/${i.IPv4Mask}` : null;
}
