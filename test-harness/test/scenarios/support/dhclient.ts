/**
 * A DHCP client on a LAN host, as LAB-NOTES.md found works in namespaces:
 * ISC dhclient with its own config, lease, pid file and a script that only
 * records what it was given (it never touches the host's resolv.conf or
 * addresses). One lease per call; the client is stopped afterwards.
 */
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ScenarioLab } from "./scenario-lab.ts";

export interface Lease {
  reason: string;
  address: string;
  leaseTime: number;
  routers: string;
  serverId: string;
  /** Every `new_*` variable dhclient passed to its script, without the prefix. */
  options: Record<string, string>;
}

const SCRIPT = `#!/bin/sh
# Records the lease dhclient obtained; changes nothing on the host.
case "$reason" in BOUND|RENEW|REBOOT|REBIND)
  env | grep '^new_' | sort > "$LEASE_DIR/lease.env"
  echo "reason=$reason" >> "$LEASE_DIR/lease.env";;
esac
exit 0
`;

/**
 * Obtains one lease on `host`'s eth0 (dhclient -1: one attempt, 30 s).
 * `askLeaseTime` sends option 51 (a client asking for a lease time).
 */
export async function obtainLease(s: ScenarioLab, host: string, dir: string, askLeaseTime?: number): Promise<Lease> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const script = join(dir, "dhclient-script.sh");
  await writeFile(script, SCRIPT.replace(/\$LEASE_DIR/g, dir));
  await chmod(script, 0o755);
  const conf = join(dir, "dhclient.conf");
  await writeFile(
    conf,
    [
      "request subnet-mask, routers, domain-name, domain-name-servers, ntp-servers, tftp-server-name, dhcp-lease-time, dhcp-server-identifier;",
      ...(askLeaseTime ? [`send dhcp-lease-time ${askLeaseTime};`] : []),
      "timeout 30;",
      "",
    ].join("\n"),
  );
  const pid = join(dir, "dhclient.pid");
  const common = ["-sf", script, "-lf", join(dir, "dhclient.leases"), "-pf", pid, "-cf", conf, "eth0"];
  const r = await s.sh(host, ["dhclient", "-4", "-1", "-v", ...common], 45_000);
  // dhclient stays in the background to renew: stop it without releasing.
  await s.sh(host, ["dhclient", "-4", "-x", ...common]);
  const text = await readFile(join(dir, "lease.env"), "utf8").catch(() => "");
  if (r.exitCode !== 0 || !text)
    throw new Error(`dhclient in ${host} got no lease (exit ${r.exitCode}):\n${r.stderr.slice(-1500)}`);
  const vars = Object.fromEntries(
    text
      .trim()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  const options = Object.fromEntries(
    Object.entries(vars)
      .filter(([k]) => k.startsWith("new_"))
      .map(([k, v]) => [k.slice(4), v.replace(/^'(.*)'$/, "$1")]),
  );
  return {
    reason: vars.reason ?? "",
    address: options.ip_address ?? "",
    leaseTime: Number(options.dhcp_lease_time),
    routers: options.routers ?? "",
    serverId: options.dhcp_server_identifier ?? "",
    options,
  };
}
