/**
 * Pure render of management QoS.
 *
 * Marking (`table inet tern_qos`, postrouting): the control connection, Tern
 * probes and their answers, ICMP echo from the router, IKE (UDP 500) and BGP
 * get `meta priority 1:10` (the HTB management class) and DSCP CS6. The mark
 * is set on any output device, so a probe that enters an XFRM tunnel keeps
 * its priority (and, with the DSCP copied outward, its class) on the WAN.
 *
 * Scheduling (tc, each WAN's egress): HTB root `1:`, class `1:1` at the line
 * rate, management `1:10` (prio 0, assured 5 %, may borrow up to the line
 * rate) and everything else `1:20` (prio 1, the default). HTB picks a leaf
 * class straight from skb->priority, so no tc filter is needed (this kernel
 * has no u32/fw classifiers). The line rate is 95 % of the interface's
 * `bandwidthMbps.tx`, so the queue forms here rather than in the modem;
 * without it the rate is 10 Gbit/s and the classes only order what queues on
 * the NIC itself.
 */
import type { DeviceConfig } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";
import { PROBE_PORT } from "../../probes/types.ts";
import { address as checkAddress, ifnameSet } from "../firewall/nft-syntax.ts";

export const QOS_TABLE = { family: "inet", name: "tern_qos" } as const;
export const MGMT_CLASS = "1:10";
export const BULK_CLASS = "1:20";
/** Rate used when the line rate is unknown: no shaping, priority only. */
export const UNSHAPED_KBIT = 10_000_000;

/**
 * kernel-libipsec's one TUN carries every tunnel's inner packets to charon,
 * which encrypts them in order and sends them from one UDP socket. When the
 * WAN is full, that socket is held back and the inner packets wait in the
 * TUN's ring (500 packets: about half a second at 10 Mbit/s), in arrival
 * order, before the WAN's HTB could put probes first. Shaping the TUN a
 * little below the slowest shaped WAN (ESP adds 60–90 bytes a packet) moves
 * that queue into an HTB of ours, where probes go first.
 */
export const TUN_SHARE = 0.85;

export interface QosInput {
  wans: { name: string; rateKbit: number }[];
  /** The rate for kernel-libipsec's TUN when tunnels run over a shaped WAN; null: not shaped. */
  tunnelRateKbit: number | null;
  controlServer: { address: string; port: number } | null;
  probePort: number;
}

export function qosInput(config: DeviceConfig, controlServer: { address: string; port: number } | null | undefined): QosInput {
  if (!config.qos.prioritizeManagement) return { wans: [], tunnelRateKbit: null, controlServer: null, probePort: PROBE_PORT };
  const wans = config.interfaces
    .filter((i) => i.type === "WAN")
    .map((i) => ({
      name: i.name,
      rateKbit: i.bandwidthMbps ? Math.max(64, Math.floor(i.bandwidthMbps.tx * 1000 * 0.95)) : UNSHAPED_KBIT,
    }));
  const carrying = new Set(config.tunnels.map((t) => t.localInterface));
  const shaped = wans.filter((w) => carrying.has(w.name) && w.rateKbit < UNSHAPED_KBIT).map((w) => w.rateKbit);
  return {
    wans,
    tunnelRateKbit: shaped.length > 0 ? Math.max(64, Math.floor(Math.min(...shaped) * TUN_SHARE)) : null,
    controlServer: controlServer ?? null,
    probePort: PROBE_PORT,
  };
}

/** The body of `table inet tern_qos`. */
export function renderQosTable(input: QosInput): string {
  const mark = `meta priority set ${MGMT_CLASS} ip dscp set cs6`;
  const lines = ["type filter hook postrouting priority mangle; policy accept;"];
  if (input.controlServer) {
    const { address, port } = input.controlServer;
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalidConfig("controlServer.port", `bad port ${port}`);
    lines.push(`ip daddr ${checkAddress(address, "controlServer.address")} tcp dport ${port} ${mark} comment "control link"`);
  }
  lines.push(
    `udp dport ${input.probePort} ${mark} comment "tunnel probes"`,
    `udp sport ${input.probePort} ${mark} comment "probe answers"`,
    `fib saddr type local icmp type { echo-request, echo-reply } ${mark} comment "ICMP probes and answers"`,
    `udp dport 500 ${mark} comment "IKE"`,
    `udp sport 500 ${mark} comment "IKE"`,
    `tcp dport 179 ${mark} comment "BGP"`,
    `tcp sport 179 ${mark} comment "BGP"`,
    `oifname ${ifnameSet(
      input.wans.map((w) => w.name),
      "interfaces",
    )} fib saddr type local ip dscp cs6 meta priority set ${MGMT_CLASS} comment "management carried in tunnels (DSCP copied outward)"`,
  );
  return `  chain postrouting {\n${lines.map((l) => `    ${l}\n`).join("")}  }\n`;
}

/** The tc commands that give `dev` the management HTB at `rateKbit`. Idempotent (`replace`). */
export function tcCommands(dev: string, rateKbit: number): string[][] {
  const mgmt = Math.max(64, Math.min(Math.floor(rateKbit * 0.05), Math.floor(rateKbit / 2)));
  const bulk = Math.max(8, rateKbit - mgmt);
  const kbit = (n: number) => `${n}kbit`;
  // Burst of about 1 ms at the line rate (at least 10 full frames): HTB's own default overflows at 10 Gbit/s.
  const burst = `${Math.max(15_000, Math.floor(rateKbit / 8))}b`;
  const shape = (rate: number) => [
    "rate",
    kbit(rate),
    "ceil",
    kbit(rateKbit),
    "burst",
    burst,
    "cburst",
    burst,
    "quantum",
    "1514",
  ];
  const tc = (...args: string[]) => ["tc", ...args];
  return [
    tc("qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "20"),
    tc("class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", ...shape(rateKbit)),
    tc("class", "replace", "dev", dev, "parent", "1:1", "classid", MGMT_CLASS, "htb", ...shape(mgmt), "prio", "0"),
    tc("class", "replace", "dev", dev, "parent", "1:1", "classid", BULK_CLASS, "htb", ...shape(bulk), "prio", "1"),
    tc("qdisc", "replace", "dev", dev, "parent", MGMT_CLASS, "handle", "10:", "pfifo", "limit", "100"),
    tc("qdisc", "replace", "dev", dev, "parent", BULK_CLASS, "handle", "20:", "pfifo", "limit", "1000"),
  ];
}
