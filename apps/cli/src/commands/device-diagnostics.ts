/**
 * tern devices ping | traceroute | resolve <device> <target>: run on the
 * router, its lines printed as they stream in (server-sent events of
 * POST /api/devices/{id}/diagnostics/…); Ctrl-C closes the connection, which
 * stops the command on the router. --json prints each event as one JSON line.
 * `tag:<tag>` instead of a device runs it on every device with the tag
 * (POST /api/devices/diagnostics), each line prefixed with its device's name.
 * tern devices logs <device> [--lines N] [--level L]: the agent's log.
 */
import { type Command, InvalidArgumentError, Option } from "@commander-js/extra-typings";
import {
  type DiagnosticBody,
  type DiagnosticKind,
  type FleetDiagnosticBody,
  ok,
  runDeviceDiagnostic,
  runFleetDiagnostic,
} from "@tern/client";
import type { CommandContext } from "../context.ts";
import { CliError, ExitCode } from "../exit-codes.ts";
import { resolveDevice } from "../support/resolve.ts";
import { contextOf, positiveInt } from "./shared.ts";

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "SRV", "SOA", "PTR", "CAA"] as const;

const milliseconds = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected milliseconds");
  return n;
};

const TAG_PREFIX = "tag:";

/** On every device with a tag: lines prefixed "[name] ", a summary; exit 1 when a device failed. */
async function runOnTag<K extends DiagnosticKind>(
  ctx: CommandContext,
  tag: string,
  kind: K,
  body: DiagnosticBody<K>,
): Promise<void> {
  const tern = await ctx.connect();
  const request = { kind, params: body, filter: [{ key: "tags", op: "contains", val: tag }] } as FleetDiagnosticBody;
  const names = new Map<string, string>();
  const failed: string[] = [];
  for await (const event of runFleetDiagnostic(tern.api, request)) {
    if (ctx.printer.json) {
      process.stdout.write(`${JSON.stringify(event)}\n`);
      if (event.type === "error") failed.push(event.deviceId);
      continue;
    }
    if (event.type === "summary") {
      ctx.printer.note(`${kind} on ${event.devices} devices tagged ${tag}: ${event.succeeded} succeeded, ${event.failed} failed`);
      continue;
    }
    if (event.type === "started") {
      const device = await ok(tern.api.GET("/api/devices/{id}", { params: { path: { id: event.deviceId } } }));
      names.set(event.deviceId, device.name);
    }
    const name = names.get(event.deviceId) ?? event.deviceId;
    if (event.type === "lines") process.stdout.write(event.lines.map((l) => `[${name}] ${l}\n`).join(""));
    else if (event.type === "error") {
      failed.push(event.deviceId);
      process.stderr.write(`[${name}] ${event.code}: ${event.message}\n`);
    }
  }
  if (failed.length)
    throw new CliError(`${kind} failed on ${failed.length} device(s) tagged ${tag}`, ExitCode.API_ERROR, "DIAGNOSTIC_FAILED");
}

async function runStreamed<K extends DiagnosticKind>(
  ctx: CommandContext,
  ref: string,
  kind: K,
  body: DiagnosticBody<K>,
): Promise<void> {
  if (ref.startsWith(TAG_PREFIX)) return runOnTag(ctx, ref.slice(TAG_PREFIX.length), kind, body);
  const tern = await ctx.connect();
  const device = await resolveDevice(tern, ref);
  for await (const event of runDeviceDiagnostic(tern.api, device.id, kind, body)) {
    if (ctx.printer.json) process.stdout.write(`${JSON.stringify(event)}\n`);
    else if (event.type === "lines") process.stdout.write(`${event.lines.join("\n")}\n`);
    else if (event.type === "started") ctx.printer.note(`${kind} on ${device.name} (job ${event.jobId})`);
    if (event.type === "error") throw new CliError(`${kind} on ${device.name}: ${event.message}`, ExitCode.API_ERROR, event.code);
  }
}

const ipVersion = (opts: { ipv4?: boolean; ipv6?: boolean }) =>
  opts.ipv6 ? { ipVersion: 6 as const } : opts.ipv4 ? { ipVersion: 4 as const } : {};

export function registerDeviceDiagnostics(devices: Command<[], Record<string, unknown>>): void {
  devices
    .command("ping")
    .description("Ping a target from the router, each reply printed as it comes (Ctrl-C stops it on the router)")
    .argument("<device>", "id or exact name, or tag:<tag> for every device with the tag")
    .argument("<target>", "IPv4 or IPv6 address or host name")
    .option("-c, --count <n>", "probes to send (default 4, at most 100)", positiveInt)
    .option("-i, --interval <ms>", "between probes, ms (default 1000, 200 to 5000)", milliseconds)
    .option("-I, --source <interface|address>", "leave from this interface or local address")
    .option("-4, --ipv4", "IPv4 only")
    .option("-6, --ipv6", "IPv6 only")
    .action(async (ref, target, opts, command) => {
      await runStreamed(contextOf(command), ref, "ping", {
        target,
        ...(opts.count !== undefined ? { count: opts.count } : {}),
        ...(opts.interval !== undefined ? { intervalMs: opts.interval } : {}),
        ...(opts.source ? { source: opts.source } : {}),
        ...ipVersion(opts),
      });
    });

  devices
    .command("traceroute")
    .description("Trace the route from the router to a target, hop by hop as it goes")
    .argument("<device>", "id or exact name, or tag:<tag> for every device with the tag")
    .argument("<target>", "IPv4 or IPv6 address or host name")
    .option("-m, --max-hops <n>", "at most this many hops (default 20, at most 64)", positiveInt)
    .option("-q, --queries <n>", "probes per hop (default 1, at most 3)", positiveInt)
    .option("-s, --source <interface|address>", "leave from this interface or local address")
    .option("-4, --ipv4", "IPv4 only")
    .option("-6, --ipv6", "IPv6 only")
    .action(async (ref, target, opts, command) => {
      await runStreamed(contextOf(command), ref, "traceroute", {
        target,
        ...(opts.maxHops !== undefined ? { maxHops: opts.maxHops } : {}),
        ...(opts.queries !== undefined ? { queries: opts.queries } : {}),
        ...(opts.source ? { source: opts.source } : {}),
        ...ipVersion(opts),
      });
    });

  devices
    .command("resolve")
    .description("Resolve a name on the router (its own resolver, or --server)")
    .argument("<device>", "id or exact name, or tag:<tag> for every device with the tag")
    .argument("<name>", "host name (or an address, with --type PTR)")
    .addOption(new Option("-t, --type <type>", "record type (default A)").choices(DNS_TYPES))
    .option("--server <address>", "ask this DNS server instead of the router's resolver")
    .action(async (ref, name, opts, command) => {
      await runStreamed(contextOf(command), ref, "dns", {
        name,
        ...(opts.type ? { type: opts.type } : {}),
        ...(opts.server ? { server: opts.server } : {}),
      });
    });

  devices
    .command("logs")
    .description("The last lines of the router agent's log (managers and owners)")
    .argument("<device>", "id or exact name")
    .option("-n, --lines <n>", "how many lines (default 200, at most 5000)", positiveInt)
    .addOption(new Option("-l, --level <level>", "only this level and more severe").choices(LOG_LEVELS))
    .action(async (ref, opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const device = await resolveDevice(tern, ref);
      const logs = await ok(
        tern.api.GET("/api/devices/{id}/logs", {
          params: {
            path: { id: device.id },
            query: { ...(opts.lines ? { lines: opts.lines } : {}), ...(opts.level ? { level: opts.level } : {}) },
          },
        }),
      );
      ctx.printer.result(logs, () => logs.lines.map(formatLogLine).join("\n"));
      if (logs.truncated && !ctx.printer.json)
        ctx.printer.note("(truncated: the answer reached its size limit; ask for fewer lines)");
    });
}

const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };

/** A pino JSON line as "time LEVEL msg {other fields}"; anything else as it is. */
export function formatLogLine(line: string): string {
  try {
    const { time, level, msg, pid: _pid, hostname: _host, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
    return `${String(time ?? "")} ${(LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5)} ${String(msg ?? "")}${extra}`;
  } catch {
    return line;
  }
}
