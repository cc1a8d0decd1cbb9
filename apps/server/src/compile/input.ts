/**
 * What the compile step needs to know about one device, built from protocol
 * resource types (not database rows): the repository layer loads these objects,
 * decrypts secrets, and hands them over. Every field is read, never changed.
 */
import type {
  ConfigHealing,
  ConfigMonitoring,
  ConfigRemoteVpn,
  Device,
  MlPolicy,
  Organization,
  PathLabel,
  PeerSettings,
  VrrpGroupCreate,
} from "@tern/protocol";

/** The device being compiled: the parts of the `Device` resource that shape its config. */
export type CompileDevice = Pick<
  Device,
  "id" | "name" | "interfaces" | "staticRoutes" | "dhcp" | "bgp" | "firewall" | "deviceSpecificRulesEnabled" | "policies"
>;

/** The other end of a tunnel: enough to know its addresses and the LAN subnets it publishes. */
export type TunnelEndDevice = Pick<Device, "id" | "name" | "interfaces" | "firewall">;

/** One end of a device tunnel: a device and the `id` (not devId) of its WAN interface. */
export interface TunnelEnd {
  device: TunnelEndDevice;
  interfaceId: string;
}

interface TunnelCommon {
  id: string;
  /** Tunnel number, unique in the organization; selects the loopback pair. */
  num: number;
  /** Path label id of the tunnel, or null. */
  pathlabel: string | null;
}

/** A tunnel between two managed devices; `psk` is the per-tunnel secret in clear (the DB layer decrypts it). */
export interface DeviceTunnelInput extends TunnelCommon {
  kind: "device";
  a: TunnelEnd;
  b: TunnelEnd;
  psk: string;
}

/** The peer as stored, with its PSK in clear. */
export type CompilePeer = PeerSettings & { id: string; psk: string };

/** A tunnel from a device interface (always side A) to a non-managed peer. */
export interface PeerTunnelInput extends TunnelCommon {
  kind: "peer";
  a: TunnelEnd;
  peer: CompilePeer;
}

export type CompileTunnel = DeviceTunnelInput | PeerTunnelInput;

/** A VRRP group as stored (the `VrrpGroup` resource fits this type). */
export type CompileVrrpGroup = VrrpGroupCreate & { id: string };

export interface CompileInput {
  device: CompileDevice;
  organization: Pick<Organization, "id" | "tunnelRange">;
  /** Every tunnel the device is an end of (others are ignored with a warning). */
  tunnels: readonly CompileTunnel[];
  /** Every VRRP group the device is a member of (others are ignored). */
  vrrpGroups: readonly CompileVrrpGroup[];
  /** The multi-link policy installed on the device (`device.policies.multilink`), or null. */
  multiLinkPolicy: Pick<MlPolicy, "id" | "rules"> | null;
  /** The organization's path labels: references to other ids are dropped with a warning. */
  pathLabels: readonly Pick<PathLabel, "id">[];
  /** Overrides of the monitoring defaults (`DEFAULT_MONITORING`). */
  monitoring?: Partial<ConfigMonitoring>;
  /** Defaults to true: mark the control link and probes ahead of bulk traffic. */
  prioritizeManagement?: boolean;
  /** The organization's healing mode and the device's links degraded against their baseline (default: `act`, none). */
  healing?: ConfigHealing;
  /** The remote worker VPN (app store) when the device runs it, with its secrets in clear. */
  remoteVpn?: ConfigRemoteVpn;
}

/**
 * Something in the input that the compiler could not turn into config, so it
 * left that part out (e.g. a tunnel whose WAN interface has no address yet).
 * The gateway can show these as a tunnel's pending reason.
 */
export interface CompileWarning {
  /** Dotted path into the input ("tunnels.<id>", "dhcp.0", "firewall.rules.3"). */
  path: string;
  message: string;
  /** The resource the warning is about, when it is one of the org's resources. */
  subject?: { type: "tunnel" | "vrrp" | "mlpolicy"; id: string };
}
