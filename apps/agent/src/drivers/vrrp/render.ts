/**
 * Pure rendering of keepalived (VRRP v3) configuration and its notify FIFO
 * script from the VRRP section. Golden-tested.
 */
import type { ConfigVrrp } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";

/** keepalived instance name of a group; the notify script reports it back. */
export const INSTANCE_PREFIX = "tern-";
const GROUP_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

export function instanceName(g: Pick<ConfigVrrp, "groupId">): string {
  return `${INSTANCE_PREFIX}${g.groupId}`;
}

/** VRRPv3 adverts are in centiseconds: milliseconds → seconds with decimals (100 → "0.1"). */
export function advertInt(ms: number): string {
  const cs = Math.max(1, Math.round(ms / 10));
  return String(cs / 100);
}

/**
 * Weight of an optional tracked interface: its loss drops the priority to 1,
 * so any peer with its links up takes over, but the router does not go to
 * FAULT (weight 0 would mean FAULT).
 */
export function optionalWeight(priority: number): number {
  return -Math.min(253, Math.max(1, priority - 1));
}

export function validateVrrp(groups: ConfigVrrp[]): void {
  const seen = new Map<string, number>();
  groups.forEach((g, i) => {
    const path = `vrrp.${i}`;
    if (!GROUP_ID.test(g.groupId)) throw invalidConfig(`${path}.groupId`, "must be 1 to 64 characters [A-Za-z0-9_.:-]");
    const key = `${g.interface}/${g.virtualRouterId}`;
    const other = seen.get(key);
    if (other !== undefined)
      throw invalidConfig(`${path}.virtualRouterId`, `${g.virtualRouterId} on ${g.interface} is also used by vrrp.${other}`);
    seen.set(key, i);
    const both = g.trackMandatory.find((n) => g.trackOptional.includes(n));
    if (both) throw invalidConfig(`${path}.trackOptional`, `${both} is tracked as both mandatory and optional`);
    if (g.trackMandatory.includes(g.interface) || g.trackOptional.includes(g.interface)) {
      throw invalidConfig(`${path}.interface`, "the VRRP interface is tracked already; do not list it");
    }
  });
}

/** Where keepalived reports transitions: its notify FIFO and the script it starts to read it. */
export interface NotifyFifo {
  fifo: string;
  script: string;
}

/**
 * keepalived.conf for all groups. Transitions go through keepalived's VRRP
 * notify FIFO, which delivers them in order; a `notify` script per
 * transition does not (keepalived forks one per change, and two changes
 * milliseconds apart, such as MASTER then BACKUP at start, can land in the
 * file in the wrong order).
 */
export function renderKeepalivedConf(groups: ConfigVrrp[], notify: NotifyFifo): string {
  if (/[\s"']/.test(notify.fifo + notify.script)) throw invalidConfig("runDir", "must not contain spaces or quotes");
  const lines = [
    "# Rendered by tern-agent (vrrp); do not edit.",
    "global_defs {",
    "  router_id tern",
    "  vrrp_version 3",
    "  enable_script_security",
    "  script_user root",
    `  vrrp_notify_fifo ${notify.fifo}`,
    `  vrrp_notify_fifo_script ${notify.script}`,
    "}",
  ];
  for (const g of groups) {
    lines.push(
      "",
      `vrrp_instance ${instanceName(g)} {`,
      "  state BACKUP",
      `  interface ${g.interface}`,
      `  virtual_router_id ${g.virtualRouterId}`,
      `  priority ${g.priority}`,
      `  advert_int ${advertInt(g.advertIntervalMs)}`,
    );
    if (!g.preemption) lines.push("  nopreempt");
    lines.push(g.acceptMode ? "  accept" : "  no_accept");
    if (g.trackMandatory.length + g.trackOptional.length > 0) {
      lines.push("  track_interface {");
      for (const n of g.trackMandatory) lines.push(`    ${n}`);
      for (const n of g.trackOptional) lines.push(`    ${n} weight ${optionalWeight(g.priority)}`);
      lines.push("  }");
    }
    lines.push("  virtual_ipaddress {", `    ${g.virtualIp}/${g.prefix} dev ${g.interface}`, "  }", "}");
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The notify FIFO script: keepalived starts it once with the FIFO as its last
 * argument and writes each transition to the FIFO, in order, as
 * `INSTANCE "NAME" STATE PRIORITY`. The script appends one line per state
 * change, `<epoch seconds> <instance> <state> <priority>`, to the file the
 * agent watches (other lines, such as MASTER_RX_LOWER_PRI, are not state
 * changes). keepalived sends TERM before it closes the FIFO: the script reads
 * on to the end so that no transition written before is lost.
 */
export function renderNotifyScript(transitions: string): string {
  if (/['\n]/.test(transitions)) throw invalidConfig("runDir", "must not contain quotes or newlines");
  return [
    "#!/bin/sh",
    "# Rendered by tern-agent (vrrp): keepalived starts this once with its notify FIFO",
    "# as the last argument and writes every VRRP transition to it, in order; each state",
    "# change becomes one line of the file the agent watches.",
    "trap '' TERM",
    "for fifo; do :; done",
    "# The instance name comes in double quotes: they separate fields like spaces.",
    "while IFS=' \"' read -r kind name state priority; do",
    '  case "$kind $state" in',
    '    "INSTANCE MASTER" | "INSTANCE BACKUP" | "INSTANCE FAULT" | "INSTANCE STOP" | "INSTANCE DELETED") ;;',
    "    *) continue ;;",
    "  esac",
    `  printf '%s %s %s %s\\n' "$(date +%s.%N)" "$name" "$state" "$priority" >> '${transitions}'`,
    'done < "$fifo"',
    "",
  ].join("\n");
}
