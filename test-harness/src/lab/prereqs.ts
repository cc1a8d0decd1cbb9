/** Checks for the tools a lab needs before touching anything, and names the Debian packages that provide them. */
import { execFileSync } from "node:child_process";
import { LabError, LabErrorCode } from "../errors.ts";
import type { LabPlan } from "../plan/types.ts";

const PACKAGE_OF: Record<string, string> = {
  ip: "iproute2",
  tc: "iproute2",
  nft: "nftables",
  iptables: "iptables",
  "iptables-restore": "iptables",
  ping: "iputils-ping",
  gcc: "gcc",
  "charon-systemd": "charon-systemd",
  swanctl: "strongswan-swanctl",
  vtysh: "frr",
  "/usr/lib/frr/zebra": "frr",
  "/usr/lib/frr/bgpd": "frr",
  "/usr/sbin/charon-systemd": "charon-systemd",
  "/usr/sbin/keepalived": "keepalived",
  "/usr/sbin/kea-dhcp4": "kea-dhcp4-server",
  "start-stop-daemon": "dpkg",
  fping: "fping",
  dhclient: "isc-dhcp-client",
  conntrack: "conntrack",
};

/**
 * What a Tern agent in standalone mode runs for a full configuration
 * (docs/agent-drivers.md): strongSwan, FRR, keepalived, kea, the WAN DHCP
 * client, fping for peer and WAN probes.
 */
const AGENT_COMMANDS = [
  "/usr/sbin/charon-systemd",
  "swanctl",
  "/usr/lib/frr/zebra",
  "/usr/lib/frr/bgpd",
  "vtysh",
  "/usr/sbin/keepalived",
  "/usr/sbin/kea-dhcp4",
  "start-stop-daemon",
  "fping",
  "dhclient",
  "conntrack",
];

function missing(cmd: string): boolean {
  try {
    execFileSync("sh", ["-c", 'command -v "$1"', "sh", cmd], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
}

/** The commands a plan needs: always the network tools; gcc for the native helpers; the daemons of its peers. */
export function requiredCommands(plan: LabPlan, opts: { emulated: boolean; control: boolean }): string[] {
  const cmds = ["ip", "tc", "nft", "ping"];
  if (opts.emulated) cmds.push("iptables", "iptables-restore", "gcc");
  if (opts.control) cmds.push("gcc", ...AGENT_COMMANDS);
  if (plan.peers.some((p) => p.kind === "strongswan")) cmds.push("charon-systemd", "swanctl");
  if (plan.peers.some((p) => p.kind === "frr")) cmds.push("vtysh", "/usr/lib/frr/zebra");
  return [...new Set(cmds)];
}

/** Throws PREREQUISITE_MISSING naming every missing command and the apt-get line that installs them. */
export function checkPrerequisites(commands: string[]): void {
  if (process.getuid?.() !== 0) {
    throw new LabError(LabErrorCode.PREREQUISITE_MISSING, "the lab needs root (network namespaces): run it with sudo or as root");
  }
  const absent = commands.filter(missing);
  if (absent.length === 0) return;
  const packages = [...new Set(absent.map((c) => PACKAGE_OF[c] ?? c))];
  throw new LabError(LabErrorCode.PREREQUISITE_MISSING, `missing: ${absent.join(", ")}`, [
    `apt-get install ${packages.join(" ")}`,
  ]);
}
