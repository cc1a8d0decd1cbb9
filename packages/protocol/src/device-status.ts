/** What a device reports about itself: interface status, BGP status, health. */
import * as z from "zod";
import { Asn, IPv4, Timestamp } from "./common.ts";

/** Freshness of a status read: `live` came from the device just now, `reported` from its last status message. */
export const StatusSource = z.enum(["live", "reported", "unknown"]);

/** ModemManager's modem states (MMModemState), as `mmcli` names them. */
export const LteModemState = z.enum([
  "failed",
  "unknown",
  "initializing",
  "locked",
  "disabled",
  "disabling",
  "enabling",
  "enabled",
  "searching",
  "registered",
  "disconnecting",
  "connecting",
  "connected",
]);
export type LteModemState = z.infer<typeof LteModemState>;

/** 3GPP registration state (MMModem3gppRegistrationState, the common ones; others read as "unknown"). */
export const LteRegistration = z.enum(["idle", "home", "searching", "denied", "roaming", "emergency-only", "unknown"]);

/**
 * LTE modem state. Since 6.3.1 there is no free `text` field: every value is
 * typed. The fields after `accessTechnology` were added by Tern's modem
 * driver; they are optional so statuses of agents without it still parse.
 */
export const LteStatus = z.strictObject({
  connected: z.boolean(),
  simStatus: z.enum(["ready", "absent", "locked", "unknown"]),
  operator: z.string(),
  signal: z.object({
    rssiDbm: z.number().nullable(),
    rsrpDbm: z.number().nullable(),
    rsrqDb: z.number().nullable(),
    sinrDb: z.number().nullable(),
  }),
  accessTechnology: z.enum(["5gnr", "lte", "umts", "gsm", "none"]),
  /** The modem's state as ModemManager reports it. */
  modemState: LteModemState.optional(),
  registration: LteRegistration.optional(),
  /** What the SIM asks for before it can be used (`sim-pin`, `sim-puk`, …); null when nothing. */
  unlockRequired: z.string().nullable().optional(),
  /** MCC+MNC of the network registered with, "" when none. */
  operatorCode: z.string().optional(),
  imei: z.string().optional(),
  /** The SIM's ICCID, "" without a SIM. */
  iccid: z.string().optional(),
  /** Signal quality 0–100 as the modem reports it. */
  signalQuality: z.number().int().min(0).max(100).nullable().optional(),
  /** The bearer's IPv4 address with prefix when connected ("10.1.2.3/30"), else "". */
  bearerAddress: z.string().optional(),
});
export type LteStatus = z.infer<typeof LteStatus>;

/** Live state of one interface. */
export const InterfaceState = z.object({
  devId: z.string(),
  name: z.string(),
  operState: z.enum(["up", "down", "unknown"]),
  IPv4: z.string(),
  IPv4Mask: z.number().int().min(0).max(32).nullable(),
  gateway: z.string(),
  mac: z.string(),
  mtu: z.number().int(),
  rxBytes: z.number().int().min(0),
  txBytes: z.number().int().min(0),
  /**
   * The kernel's cumulative counters beside the byte counts (/sys/class/net/<if>/statistics,
   * `ip -s`): packets, errors and drops each way. Optional: agents before statistics history omit them.
   */
  rxPackets: z.number().int().min(0).optional(),
  txPackets: z.number().int().min(0).optional(),
  rxErrors: z.number().int().min(0).optional(),
  txErrors: z.number().int().min(0).optional(),
  rxDrops: z.number().int().min(0).optional(),
  txDrops: z.number().int().min(0).optional(),
  /** Public address as the device sees it (e.g. from STUN); the server also records the source of the websocket. */
  publicIp: z.string(),
  publicPort: z.number().int().min(0).max(65535).nullable(),
  lte: LteStatus.nullable(),
});
export type InterfaceState = z.infer<typeof InterfaceState>;

/** `GET /devices/{id}/interfaces/{interfaceId}/status`. */
export const InterfaceStatusResponse = z.object({
  deviceId: z.string(),
  interfaceId: z.string(),
  source: StatusSource,
  state: z.union([InterfaceState, z.literal("unknown")]),
  reportedAt: Timestamp.nullable(),
});
export type InterfaceStatusResponse = z.infer<typeof InterfaceStatusResponse>;

export const BgpNeighborState = z.object({
  ip: IPv4,
  remoteASN: Asn,
  state: z.enum(["Idle", "Connect", "Active", "OpenSent", "OpenConfirm", "Established", "Unknown"]),
  uptimeSeconds: z.number().int().min(0),
  prefixesReceived: z.number().int().min(0),
  prefixesSent: z.number().int().min(0),
});
export type BgpNeighborState = z.infer<typeof BgpNeighborState>;

export const BgpState = z.object({
  running: z.boolean(),
  routerId: z.string(),
  localASN: z.number().int().nullable(),
  neighbors: z.array(BgpNeighborState),
});
export type BgpState = z.infer<typeof BgpState>;

/** `GET /devices/{id}/bgp/status`. */
export const BgpStatusResponse = z.object({
  deviceId: z.string(),
  source: StatusSource,
  state: z.union([BgpState, z.literal("unknown")]),
  reportedAt: Timestamp.nullable(),
});
export type BgpStatusResponse = z.infer<typeof BgpStatusResponse>;

export const VrrpRouterState = z.enum(["MASTER", "BACKUP", "FAULT", "INIT", "unknown"]);
export type VrrpRouterState = z.infer<typeof VrrpRouterState>;

export const Health = z.object({
  uptimeSeconds: z.number().min(0),
  cpuPercent: z.number().min(0).max(100),
  memoryPercent: z.number().min(0).max(100),
  diskPercent: z.number().min(0).max(100),
  temperatureC: z.number().nullable(),
});
export type Health = z.infer<typeof Health>;
