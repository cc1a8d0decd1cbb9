/**
 * Messages on the device websocket, one discriminated union on `type`.
 *
 * PROTOCOL_VERSION history:
 *   1 (2026-11-21) first version: hello/welcome, apply/apply-result, status,
 *     request/response, error.
 *   2 (2026-11-25) device identity: the server opens every link with
 *     `challenge`; `hello` carries `proof` (the device key's signature of the
 *     challenge, device id, machine id and URL); `rekey`/`rekeyed` replace
 *     the device key; registration carries `identity` (connect.ts).
 *     Version 1 agents are refused (they cannot prove their identity).
 *   2, compatible addition (2026-11-25): `TunnelReport` may carry `windowMs`,
 *     `sent` and `received` (the loss window's span and the raw probe counts);
 *     servers accept reports without them, agents send them.
 *   2, compatible addition (2026-11-25): `status` may carry `healing` (what
 *     the agent healed by itself) and `links` (WAN link quality); `apply`'s
 *     config may carry `healing` (mode, links to avoid). Both sides accept
 *     messages without them.
 *   2, compatible addition (2026-11-25): request methods `dump-create` and
 *     `dump-read` (device-dump.ts); an older agent refuses them as unknown
 *     methods and the server marks the dump failed.
 *   2, compatible addition (2026-11-25): `DeviceConfig.remoteVpn` (the app
 *     store's remote worker VPN), absent on devices that do not run it, so
 *     their configs and hashes are unchanged. An agent built before it strips
 *     the section and does not set the VPN up: update agents before
 *     installing the application on them.
 *   2, compatible addition (2026-11-26): request method `device-action`
 *     (restart-agent, stop, start, reset: device-actions.ts) and `status`'s
 *     optional `dataPlane`; an older agent refuses the method as unknown and
 *     the server fails the action's job with that answer.
 *   2, compatible addition (2026-11-26): request methods `upgrade-begin`,
 *     `upgrade-chunk`, `upgrade-install` and `status.upgrade`
 *     (agent-upgrade.ts); an older agent refuses the methods as unknown and
 *     the server counts that device's upgrade failed.
 *   2, compatible addition (2026-11-26, issue 19): `request-progress` (the
 *     lines of a running ping, traceroute or dns-lookup, before its
 *     `response`); request methods `dns-lookup`, `log-read` and `cancel`;
 *     ping and traceroute take IPv6 and host-name targets and more options
 *     and answer more fields. An older agent sends no progress (the server
 *     streams the final output's lines), refuses the new methods as unknown
 *     and IPv6/host-name targets as invalid.
 */

import * as z from "zod";
import { UpgradeAck, UpgradeBeginParams, UpgradeChunkParams, UpgradeInstallParams, UpgradeReport } from "./agent-upgrade.ts";
import { Timestamp } from "./common.ts";
import { DevicePublicKey, DeviceSignature } from "./connect.ts";
import { DataPlaneState, DeviceActionParams, DeviceActionResult } from "./device-actions.ts";
import { DeviceConfig } from "./device-config.ts";
import { DumpChunk, DumpCreated, DumpReadParams } from "./device-dump.ts";
import { BgpState, Health, InterfaceState, VrrpRouterState } from "./device-status.ts";
import {
  DnsLookupParams,
  DnsLookupResult,
  LogReadParams,
  LogReadResult,
  PingParams,
  PingResult,
  PROGRESS_LINE_CHARS,
  PROGRESS_MAX_LINES,
  TracerouteParams,
  TracerouteResult,
} from "./diagnostics.ts";
import { AgentHealingReport, LinkReport } from "./healing.ts";
import { DriverResult } from "./job.ts";

export const PROTOCOL_VERSION = 2;
/** Versions the server accepts from agents. */
export const SUPPORTED_PROTOCOL_VERSIONS = [2] as const;
/** Largest websocket message either side accepts, in bytes. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * The server's first message on every link: a one-time random `nonce` the
 * hello must sign, and the public key the server holds for the device (null
 * when it holds none yet: a device registered before version 2), so an agent
 * in the middle of a re-key knows which of its keys to use.
 */
export const Challenge = z.object({
  type: z.literal("challenge"),
  nonce: z.string().min(32).max(200),
  publicKey: DevicePublicKey.nullable(),
});

/** The device key's signature of `helloProofText` for this link. */
export const HelloProof = z.strictObject({
  publicKey: DevicePublicKey,
  /** The websocket URL the agent connected to (its host must be the one the server was reached at). */
  url: z.string().min(1).max(2000),
  signature: DeviceSignature,
});
export type HelloProof = z.infer<typeof HelloProof>;

export const Hello = z.object({
  type: z.literal("hello"),
  protocolVersion: z.number().int(),
  agentVersion: z.string().max(50),
  machineId: z.string().min(1).max(200),
  hostname: z.string().max(253),
  /** Hash of the config the agent has applied, null when it has none. */
  appliedHash: z.string().nullable(),
  /** Required from version 2 (optional in the schema so an old agent gets UNSUPPORTED_PROTOCOL_VERSION). */
  proof: HelloProof.optional(),
});

/**
 * Replaces the device's key (after welcome): `publicKey` is the new key,
 * `signature` the current key's and `newKeySignature` the new key's signature
 * of `rekeyProofText` with this link's challenge nonce. Answered `rekeyed`
 * once stored, or `error` (IDENTITY_PROOF_INVALID) and the key is unchanged.
 */
export const Rekey = z.object({
  type: z.literal("rekey"),
  publicKey: DevicePublicKey,
  signature: DeviceSignature,
  newKeySignature: DeviceSignature,
});

export const Rekeyed = z.object({
  type: z.literal("rekeyed"),
  publicKey: DevicePublicKey,
});

export const Welcome = z.object({
  type: z.literal("welcome"),
  deviceId: z.string(),
  protocolVersion: z.number().int(),
  serverVersion: z.string(),
  statusIntervalMs: z.number().int(),
});

export const Apply = z.object({
  type: z.literal("apply"),
  /** Correlates the result; unique per send. */
  id: z.string(),
  hash: z.string(),
  config: DeviceConfig,
});

export const ApplyResult = z.object({
  type: z.literal("apply-result"),
  id: z.string(),
  ok: z.boolean(),
  /** The hash now applied: the requested one on success, the last good one after a rollback. */
  appliedHash: z.string().nullable(),
  rolledBack: z.boolean(),
  drivers: z.array(DriverResult),
  error: z.string().optional(),
});

export const TunnelReport = z.object({
  id: z.string(),
  up: z.boolean(),
  loss: z.number().min(0).max(100),
  rtt: z.number().min(0),
  jitter: z.number().min(0),
  /** Probes in the window the figures come from. */
  samples: z.number().int().min(0),
  /** Time the loss window covers, ms (earlier agents omit it). */
  windowMs: z.number().int().min(0).optional(),
  /**
   * Raw counts behind the figures: probes finalised (answered or lost) and
   * answered, to the reported target, since the agent started probing it.
   * Cumulative, so the loss over any period is Δ(sent − received) / Δsent;
   * a count lower than the previous one means the counter restarted.
   */
  sent: z.number().int().min(0).optional(),
  received: z.number().int().min(0).optional(),
});
export type TunnelReport = z.infer<typeof TunnelReport>;

export const Status = z.object({
  type: z.literal("status"),
  at: Timestamp,
  appliedHash: z.string().nullable(),
  applying: z.boolean(),
  tunnels: z.array(TunnelReport).max(10000),
  interfaces: z.array(InterfaceState).max(256),
  bgp: BgpState.nullable(),
  vrrp: z.array(z.object({ groupId: z.string(), state: VrrpRouterState, since: Timestamp.nullable() })).max(64),
  health: Health.nullable(),
  /** What the agent healed by itself since the server last acknowledged it (agents before healing omit it). */
  healing: z.array(AgentHealingReport).max(100).optional(),
  /** Quality of the WAN links that carry a path label, for the server's baselines (agents before healing omit it). */
  links: z.array(LinkReport).max(64).optional(),
  /** `stopped` after a `stop` action until `start` (agents before remote actions omit it: running). */
  dataPlane: DataPlaneState.optional(),
  /** The outcome of the agent's last upgrade (agent-upgrade.ts; agents before upgrades omit it). */
  upgrade: UpgradeReport.optional(),
});
export type Status = z.infer<typeof Status>;

/** On-demand reads the server may ask a device for, each with its params and result. */
export const REQUESTS = {
  "interface-status": { params: z.object({ devId: z.string() }), result: InterfaceState },
  "bgp-status": { params: z.object({}), result: BgpState },
  "tunnel-quality": { params: z.object({}), result: z.array(TunnelReport) },
  /** Streamed: each output line comes in `request-progress` before the response (agents before issue 19 send none). */
  ping: { params: PingParams, result: PingResult },
  traceroute: { params: TracerouteParams, result: TracerouteResult },
  /** Streamed like ping: one line per answer. */
  "dns-lookup": { params: DnsLookupParams, result: DnsLookupResult },
  /** The last lines of the agent's log file, filtered by level. */
  "log-read": { params: LogReadParams, result: LogReadResult },
  /** Stops the running request `id` (its caller went away); `stopped` is false when none of that id runs. */
  cancel: { params: z.object({ id: z.string().min(1).max(100) }), result: z.object({ stopped: z.boolean() }) },
  /** Make a diagnostic dump (as `tern-agent dump`) in the agent's dumps directory. */
  "dump-create": { params: z.object({}), result: DumpCreated },
  /** One chunk of a dump `dump-create` made. */
  "dump-read": { params: DumpReadParams, result: DumpChunk },
  /** A remote action the agent carries out (restart-agent, stop, start, reset: device-actions.ts). */
  "device-action": { params: DeviceActionParams, result: DeviceActionResult },
  /** A signed agent package is coming (agent-upgrade.ts); refused without a trusted key or with a bad signature. */
  "upgrade-begin": { params: UpgradeBeginParams, result: UpgradeAck },
  /** Bytes of the package from `offset`. */
  "upgrade-chunk": { params: UpgradeChunkParams, result: UpgradeAck },
  /** Verify, install side by side and restart into it under the rollback guard. */
  "upgrade-install": { params: UpgradeInstallParams, result: UpgradeAck },
} as const;
export type RequestMethod = keyof typeof REQUESTS;
export const RequestMethodSchema = z.enum(Object.keys(REQUESTS) as [RequestMethod, ...RequestMethod[]]);

export const Request = z.object({
  type: z.literal("request"),
  id: z.string(),
  method: RequestMethodSchema,
  params: z.record(z.string(), z.unknown()),
});

export const Response = z.object({
  type: z.literal("response"),
  id: z.string(),
  ok: z.boolean(),
  result: z.unknown().optional(),
  error: z.string().optional(),
});

/**
 * Output of a running streamed request (ping, traceroute, dns-lookup) as it
 * comes, before its `response`; `seq` counts from 0 per request so the server
 * can tell a lost or reordered one.
 */
export const RequestProgress = z.object({
  type: z.literal("request-progress"),
  id: z.string(),
  seq: z.number().int().min(0),
  lines: z.array(z.string().max(PROGRESS_LINE_CHARS)).min(1).max(PROGRESS_MAX_LINES),
});
export type RequestProgress = z.infer<typeof RequestProgress>;

export const ErrorMessage = z.object({
  type: z.literal("error"),
  code: z.string(),
  message: z.string(),
});

/** Everything a device may send. */
export const DeviceMessage = z.discriminatedUnion("type", [
  Hello,
  ApplyResult,
  Status,
  Response,
  RequestProgress,
  Rekey,
  ErrorMessage,
]);
export type DeviceMessage = z.infer<typeof DeviceMessage>;

/** Everything the server may send. */
export const ServerMessage = z.discriminatedUnion("type", [Challenge, Welcome, Apply, Request, Rekeyed, ErrorMessage]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/** Websocket close codes (4000–4999 are application codes). */
export const CLOSE_CODES = {
  unauthenticated: 4001,
  notApproved: 4003,
  protocolVersion: 4006,
  replaced: 4009,
  badMessage: 4400,
  rateLimited: 4429,
  deviceDeleted: 4410,
} as const;

export type Challenge = z.infer<typeof Challenge>;
export type Hello = z.infer<typeof Hello>;
export type Rekey = z.infer<typeof Rekey>;
export type Rekeyed = z.infer<typeof Rekeyed>;
export type Welcome = z.infer<typeof Welcome>;
export type Apply = z.infer<typeof Apply>;
export type ApplyResult = z.infer<typeof ApplyResult>;
export type Request = z.infer<typeof Request>;
export type Response = z.infer<typeof Response>;
