/**
 * Diagnostics run on the router (issue 19, remote actions): ping, traceroute,
 * DNS lookup and the agent's log, asked for over the device's websocket
 * (`request`) and, for the streamed ones, answered line by line with
 * `request-progress` before the final `response`.
 *
 * Targets and sources are validated here so nothing the caller sends can turn
 * into an option of the command the agent runs (no value starts with "-").
 */
import * as z from "zod";
import { Hostname, IPv4 } from "./common.ts";
import { oneSelection, SELECTION_MESSAGE, selectionFields } from "./device-actions.ts";

export const IPv6 = z.ipv6({ message: "must be an IPv6 address" });
export const IpAddress = z.union([IPv4, IPv6]);

/** What to ping, trace or resolve: an IPv4 or IPv6 address or a host name. */
export const DiagnosticTarget = z.union([IPv4, IPv6, Hostname.max(253)], {
  message: "must be an IPv4 address, an IPv6 address or a host name",
});

/** The interface (Linux name) or local address the probes leave from. */
export const DiagnosticSource = z.union([
  IpAddress,
  z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{1,14}$/, "must be a local address or an interface name"),
]);

/** Forces IPv4 or IPv6 (`-4`/`-6`); unset: what the target resolves to. */
export const IpVersion = z.union([z.literal(4), z.literal(6)]);

export const PingParams = z.object({
  target: DiagnosticTarget,
  count: z.number().int().min(1).max(100).default(4),
  /** Between probes, ms (ping's `-i`; 200 ms is the least ping allows an unprivileged user). */
  intervalMs: z.number().int().min(200).max(5000).default(1000),
  /** How long to wait for each reply, ms (ping's `-W`). */
  waitMs: z.number().int().min(100).max(10_000).default(1000),
  source: DiagnosticSource.optional(),
  ipVersion: IpVersion.optional(),
});
export type PingParams = z.infer<typeof PingParams>;

export const PingResult = z.object({
  transmitted: z.number().int(),
  received: z.number().int(),
  lossPercent: z.number(),
  rttAvgMs: z.number().nullable(),
  /** Fastest and slowest reply (agents before issue 19 omit them). */
  rttMinMs: z.number().nullable().optional(),
  rttMaxMs: z.number().nullable().optional(),
  /** Stopped before the end: the caller cancelled or the time limit passed (agents before issue 19 omit it). */
  stopped: z.enum(["cancelled", "time-limit"]).nullable().optional(),
  /** The command's whole output (at most 64 KiB). */
  output: z.string(),
});
export type PingResult = z.infer<typeof PingResult>;

export const TracerouteParams = z.object({
  target: DiagnosticTarget,
  maxHops: z.number().int().min(1).max(64).default(20),
  /** Probes per hop (`-q`). */
  queries: z.number().int().min(1).max(3).default(1),
  /** How long to wait for each probe's answer, ms (`-w`, whole seconds from 1 to 5). */
  waitMs: z.number().int().min(1000).max(5000).default(1000),
  source: DiagnosticSource.optional(),
  ipVersion: IpVersion.optional(),
});
export type TracerouteParams = z.infer<typeof TracerouteParams>;

export const TracerouteHop = z.object({
  hop: z.number().int().min(1),
  /** The address that answered (the first one of the hop's probes), null when none did (`*`). */
  address: z.string().nullable(),
  /** Round trip of each probe that was answered, ms. */
  rttMs: z.array(z.number()),
});
export type TracerouteHop = z.infer<typeof TracerouteHop>;

export const TracerouteResult = z.object({
  /** The command's whole output (at most 64 KiB). */
  output: z.string(),
  /** Parsed hops (agents before issue 19 send only `output`). */
  hops: z.array(TracerouteHop).max(64).optional(),
  stopped: z.enum(["cancelled", "time-limit"]).nullable().optional(),
});
export type TracerouteResult = z.infer<typeof TracerouteResult>;

export const DNS_RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "SRV", "SOA", "PTR", "CAA"] as const;
export const DnsRecordType = z.enum(DNS_RECORD_TYPES);
export type DnsRecordType = z.infer<typeof DnsRecordType>;

export const DnsLookupParams = z.object({
  /** A host name, or an address (with type PTR: its reverse name is asked). */
  name: DiagnosticTarget,
  type: DnsRecordType.default("A"),
  /** A DNS server to ask instead of the router's own resolver. */
  server: IpAddress.optional(),
  /** Time limit of the lookup, ms. */
  timeoutMs: z.number().int().min(500).max(15_000).default(5000),
});
export type DnsLookupParams = z.infer<typeof DnsLookupParams>;

export const DnsAnswer = z.object({
  type: DnsRecordType,
  /** The record's value as text (an address, a name, "10 mx.example.com", TXT strings joined). */
  value: z.string().max(2000),
  ttl: z.number().int().nullable(),
});

export const DnsLookupResult = z.object({
  name: z.string(),
  type: DnsRecordType,
  /** `system`: the router's resolver as its programs use it (hosts file, nsswitch, resolv.conf); else the server asked. */
  via: z.string(),
  answers: z.array(DnsAnswer).max(500),
  /** The resolver's error code when there is no answer (ENOTFOUND, ENODATA, ETIMEOUT …), null on success. */
  error: z.string().nullable(),
  durationMs: z.number().min(0),
});
export type DnsLookupResult = z.infer<typeof DnsLookupResult>;

/** The agent's log levels (pino's), least to most severe; `level` filters to that one and above. */
export const AGENT_LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export const AgentLogLevel = z.enum(AGENT_LOG_LEVELS);
export type AgentLogLevel = z.infer<typeof AgentLogLevel>;
export const MAX_LOG_LINES = 5000;

export const LogReadParams = z.object({
  lines: z.number().int().min(1).max(MAX_LOG_LINES).default(200),
  level: AgentLogLevel.default("trace"),
});
export type LogReadParams = z.infer<typeof LogReadParams>;

/** Bytes of log lines in one answer at most: the answer stays inside MAX_MESSAGE_BYTES. */
export const MAX_LOG_ANSWER_BYTES = 768 * 1024;

export const LogReadResult = z.object({
  /** The last matching lines, oldest first: pino JSON lines as the agent wrote them. */
  lines: z.array(z.string()).max(MAX_LOG_LINES),
  /** True when fewer lines than asked for came back because the answer hit MAX_LOG_ANSWER_BYTES or a line was cut. */
  truncated: z.boolean(),
  /** The log file read; null when the agent logs to no file (then `lines` is empty). */
  file: z.string().nullable(),
});
export type LogReadResult = z.infer<typeof LogReadResult>;

/** Lines of one `request-progress` message at most, and characters of each line. */
export const PROGRESS_MAX_LINES = 20;
export const PROGRESS_LINE_CHARS = 300;

/** The most a ping may take: every probe, the last reply's wait, and a margin for name resolution. */
export const pingTimeLimitMs = (p: PingParams) => p.count * p.intervalMs + p.waitMs + 5000;

/** A hop waits at most queries × wait (traceroute probes several hops at once); capped at 3 minutes. */
export const tracerouteTimeLimitMs = (p: TracerouteParams) => Math.min(p.maxHops * p.queries * p.waitMs + 5000, 180_000);

/** Devices one fleet diagnostic (`POST /devices/diagnostics`) may run on; more is a job for a monitoring system. */
export const MAX_DIAGNOSTIC_DEVICES = 100;
/** Runs of a fleet diagnostic in flight at once. */
export const DIAGNOSTIC_DEVICES_IN_FLIGHT = 8;

/** Body of `POST /devices/diagnostics`: one diagnostic on many devices (by ids, filter or tag), streamed. */
export const DevicesDiagnosticRequest = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("ping"), params: z.strictObject(PingParams.shape), ...selectionFields }),
    z.strictObject({ kind: z.literal("traceroute"), params: z.strictObject(TracerouteParams.shape), ...selectionFields }),
    z.strictObject({ kind: z.literal("dns"), params: z.strictObject(DnsLookupParams.shape), ...selectionFields }),
  ])
  .refine(oneSelection, SELECTION_MESSAGE);
export type DevicesDiagnosticRequest = z.infer<typeof DevicesDiagnosticRequest>;
