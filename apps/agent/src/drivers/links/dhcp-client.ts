/**
 * The WAN DHCP client: one dhclient per interface with its own config, pid
 * and lease files under `runDir/links/`. Its script only records the lease
 * (and logs the event); the agent then applies the address and default
 * route itself, so they are agent-owned like any static ones, carry the
 * metric from the config, and the host's resolv.conf is never touched.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseIPv4 } from "@tern/protocol";
import { isRunning, readPidFile } from "../../process.ts";
import type { Runner } from "../../runner.ts";

export interface DhcpLease {
  address: string;
  prefix: number;
  routers: string[];
  leaseSeconds: number | null;
  reason: string;
}

export interface DhcpClientPaths {
  dir: string;
  conf: string;
  script: string;
  pid(dev: string): string;
  lease(dev: string): string;
  leases(dev: string): string;
  events(dev: string): string;
}

export function dhcpClientPaths(runDir: string): DhcpClientPaths {
  const dir = join(runDir, "links");
  return {
    dir,
    conf: join(dir, "dhclient.conf"),
    script: join(dir, "dhclient-script.sh"),
    pid: (dev) => join(dir, `dhclient-${dev}.pid`),
    lease: (dev) => join(dir, `dhclient-${dev}.lease`),
    leases: (dev) => join(dir, `dhclient-${dev}.leases`),
    events: (dev) => join(dir, `dhclient-${dev}.events.log`),
  };
}

/** Single-quotes a value for /bin/sh. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export function renderDhclientConf(): string {
  return [
    "# Written by tern-agent (links driver); one dhclient per WAN interface uses it.",
    "request subnet-mask, broadcast-address, routers, domain-name-servers, interface-mtu, ntp-servers,",
    "        dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;",
    "timeout 30;",
    "retry 10;",
    "",
  ].join("\n");
}

/** The script dhclient runs on each event: records the lease atomically, changes nothing on the system. */
export function renderDhclientScript(paths: DhcpClientPaths): string {
  return `#!/bin/sh
# Written by tern-agent (links driver). dhclient runs this on every lease event.
# It only records the lease for the agent, which applies the address and the
# default route itself; it never touches addresses, routes or resolv.conf.
dir=${shellQuote(paths.dir)}
lease="$dir/dhclient-$interface.lease"
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) reason=$reason ip=$new_ip_address mask=$new_subnet_mask routers=$new_routers lease=$new_dhcp_lease_time server=$new_dhcp_server_identifier" >> "$dir/dhclient-$interface.events.log"
case "$reason" in
BOUND|RENEW|REBIND|REBOOT)
  printf 'reason=%s\\nip=%s\\nmask=%s\\nrouters=%s\\nlease=%s\\nserver=%s\\n' \\
    "$reason" "$new_ip_address" "$new_subnet_mask" "$new_routers" "$new_dhcp_lease_time" "$new_dhcp_server_identifier" \\
    > "$lease.tmp" && mv -f "$lease.tmp" "$lease"
  ;;
EXPIRE|FAIL|RELEASE|STOP|TIMEOUT)
  rm -f "$lease"
  ;;
esac
exit 0
`;
}

export function dhclientStartArgv(paths: DhcpClientPaths, dev: string): string[] {
  return ["dhclient", "-4", "-nw", "-cf", paths.conf, "-sf", paths.script, "-lf", paths.leases(dev), "-pf", paths.pid(dev), dev];
}

/** `-x` stops the client without releasing the lease (the interface keeps working until the agent removes the address). */
export function dhclientStopArgv(paths: DhcpClientPaths, dev: string): string[] {
  return ["dhclient", "-4", "-x", "-cf", paths.conf, "-sf", paths.script, "-lf", paths.leases(dev), "-pf", paths.pid(dev), dev];
}

/** Prefix length of a dotted netmask, or null when it is not a contiguous mask. */
export function maskToPrefix(mask: string): number | null {
  const value = parseIPv4(mask);
  if (value === null) return null;
  const inverted = ~value >>> 0;
  if ((inverted & (inverted + 1)) !== 0) return null;
  return 32 - Math.log2(inverted + 1);
}

/** Parses a lease file written by the script; null when it is missing or not a usable lease. */
export function parseLease(text: string): DhcpLease | null {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const address = fields.get("ip") ?? "";
  const prefix = maskToPrefix(fields.get("mask") ?? "");
  if (parseIPv4(address) === null || prefix === null) return null;
  const routers = (fields.get("routers") ?? "").split(/\s+/).filter((r) => parseIPv4(r) !== null);
  const lease = Number.parseInt(fields.get("lease") ?? "", 10);
  return { address, prefix, routers, leaseSeconds: Number.isFinite(lease) ? lease : null, reason: fields.get("reason") ?? "" };
}

export async function readLease(paths: DhcpClientPaths, dev: string): Promise<DhcpLease | null> {
  const text = await readFile(paths.lease(dev), "utf8").catch(() => null);
  return text === null ? null : parseLease(text);
}

/** The pid of the dhclient for `dev` when it runs. */
export async function runningDhclient(runner: Runner, paths: DhcpClientPaths, dev: string): Promise<number | null> {
  const pid = await readPidFile(paths.pid(dev));
  // Its command line names its own pid file, so another dhclient (or a reused pid) never matches.
  if (pid === null || !(await isRunning(runner, pid, { argsInclude: paths.pid(dev) }))) return null;
  return pid;
}
