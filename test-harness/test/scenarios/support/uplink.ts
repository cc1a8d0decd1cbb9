/**
 * An access line's upload rate for one WAN attachment of a lab. The lab's own
 * `rateMbit` is a tbf on the cloud's interface toward the node, i.e. the
 * download direction. The ISP's upload queue (the modem buffer where
 * bufferbloat happens) sits on the cloud's ingress from the node: its
 * packets are redirected (cls_bpf matching everything + act_mirred; this
 * kernel has no matchall or u32) to an ifb device whose root is a tbf.
 */
import type { ScenarioLab } from "./scenario-lab.ts";

export interface Uplink {
  /** The cloud's interface toward the node, and the ifb that shapes what comes from it. */
  cloudIf: string;
  ifb: string;
  /** Packets the upload tbf dropped so far. */
  drops(): Promise<number>;
  remove(): Promise<void>;
}

/** Limits what `node` sends into `cloud` to `rateMbit`, with a `queueMs` deep buffer (tbf latency). */
export async function limitUplink(
  s: ScenarioLab,
  cloud: string,
  node: string,
  rateMbit: number,
  queueMs: number,
): Promise<Uplink> {
  const att = s.lab.plan.attachments.find((a) => a.cloud === cloud && a.node === node);
  if (!att) throw new Error(`${node} has no attachment on ${cloud}`);
  const ifb = `ifb-${att.cloudIf}`.slice(0, 15);
  const sh = async (argv: string[]) => {
    const r = await s.sh(cloud, argv);
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} in ${cloud}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const burst = Math.max(Math.round((rateMbit * 1e6) / 8 / 100), 4 * 1514);
  await sh(["ip", "link", "add", ifb, "type", "ifb"]);
  await sh(["ip", "link", "set", ifb, "up"]);
  await sh([
    "tc",
    "qdisc",
    "add",
    "dev",
    ifb,
    "root",
    "tbf",
    "rate",
    `${rateMbit}mbit`,
    "burst",
    String(burst),
    "latency",
    `${queueMs}ms`,
  ]);
  await sh(["tc", "qdisc", "add", "dev", att.cloudIf, "handle", "ffff:", "ingress"]);
  // Classic BPF "ret #-1": every packet matches.
  await sh([
    "tc",
    "filter",
    "add",
    "dev",
    att.cloudIf,
    "parent",
    "ffff:",
    "bpf",
    "bytecode",
    "1,6 0 0 4294967295,",
    "action",
    "mirred",
    "egress",
    "redirect",
    "dev",
    ifb,
  ]);
  return {
    cloudIf: att.cloudIf,
    ifb,
    drops: async () => Number(/dropped (\d+)/.exec(await sh(["tc", "-s", "qdisc", "show", "dev", ifb]))?.[1] ?? Number.NaN),
    remove: async () => {
      await s.sh(cloud, ["tc", "qdisc", "del", "dev", att.cloudIf, "ingress"]);
      await s.sh(cloud, ["ip", "link", "del", ifb]);
    },
  };
}
