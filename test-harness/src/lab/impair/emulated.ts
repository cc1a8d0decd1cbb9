/**
 * Impairment without netem, per cloud namespace:
 * - loss: one nftables table (`tern_lab_impair`), `oifname X numgen random mod 10000 < N drop`
 *   (0.01 % steps), replaced atomically;
 * - delay and jitter: an iptables-nft `NFQUEUE --queue-num Q --queue-bypass` rule per
 *   attachment in chain TERN-LAB-DELAY (mangle POSTROUTING) and one nfq-netem process
 *   bound to queue Q, which reloads its parameters on SIGHUP;
 * - rate: a tbf root qdisc on the interface.
 * The loss chain runs before mangle, so dropped packets never occupy the delay queue.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { run } from "@tern/netlab";
import { logSize, type ProcessTable, waitForLog } from "../process-table.ts";
import type { AttachmentTarget } from "./types.ts";

export const NFT_TABLE = "tern_lab_impair";
export const DELAY_CHAIN = "TERN-LAB-DELAY";

export interface EmulatedContext {
  procs: ProcessTable;
  /** Path of the nfq-netem binary (built on first use). */
  nfqNetem: () => Promise<string>;
  /** Directory for parameter files and logs. */
  dir: string;
}

/** The nft script that replaces the loss table of one cloud namespace. */
export function renderLossTable(targets: AttachmentTarget[]): string {
  const rules = targets
    .filter((t) => t.impairment.lossPercent > 0)
    .map(
      (t) => `    oifname "${t.cloudIf}" numgen random mod 10000 < ${Math.round(t.impairment.lossPercent * 100)} counter drop`,
    );
  const lines = [`table ip ${NFT_TABLE}`, `delete table ip ${NFT_TABLE}`];
  if (rules.length > 0) {
    lines.push(
      `table ip ${NFT_TABLE} {`,
      "  chain loss {",
      "    type filter hook postrouting priority -300; policy accept;",
      ...rules,
      "  }",
      "}",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The iptables-restore input that replaces the delay chain's rules. */
export function renderDelayRules(targets: AttachmentTarget[]): string {
  const rules = targets
    .filter(hasDelay)
    .map((t) => `-A ${DELAY_CHAIN} -o ${t.cloudIf} -j NFQUEUE --queue-num ${t.queue} --queue-bypass`);
  return ["*mangle", `:${DELAY_CHAIN} - [0:0]`, ...rules, "COMMIT", ""].join("\n");
}

function hasDelay(t: AttachmentTarget): boolean {
  return t.impairment.delayMs > 0 || t.impairment.jitterMs > 0;
}

/** tbf burst: 10 ms worth of bytes, at least a few full-size frames. */
export function tbfArgs(rateMbit: number): string[] {
  const burst = Math.max(Math.round((rateMbit * 1e6) / 8 / 100), 4 * 1514);
  return ["rate", `${rateMbit}mbit`, "burst", String(burst), "latency", "50ms"];
}

const nfqKey = (t: AttachmentTarget) => `nfq:${t.id}`;

/** Applies the desired impairment of every attachment of one cloud (all targets share cloudNs). */
export async function applyEmulated(cloudNs: string, targets: AttachmentTarget[], ctx: EmulatedContext): Promise<void> {
  const inNs = (argv: string[]) => ["ip", "netns", "exec", cloudNs, ...argv];
  await mkdir(ctx.dir, { recursive: true });
  await run(inNs(["nft", "-f", "-"]), { input: renderLossTable(targets) });

  // Delay helpers first (bound before their rule exists), rules next, unneeded helpers last.
  for (const t of targets.filter(hasDelay)) {
    const params = join(ctx.dir, `${t.id.replace(":", "_")}.params`);
    const log = join(ctx.dir, `${t.id.replace(":", "_")}.log`);
    const content = `${t.impairment.delayMs} 0 ${t.impairment.jitterMs}\n`;
    const unchanged = (await readFile(params, "utf8").catch(() => "")) === content;
    await writeFile(params, content);
    const from = await logSize(log);
    const alive = await ctx.procs.alive(nfqKey(t));
    if (alive && unchanged) continue;
    if (alive) {
      process.kill(ctx.procs.get(nfqKey(t))!.pid, "SIGHUP");
      await waitForLog(log, from, /nfq-netem: reloaded|keeping old values/);
    } else {
      const bin = await ctx.nfqNetem();
      await ctx.procs.ensure({
        key: nfqKey(t),
        role: "nfq-netem",
        argv: [bin, String(t.queue), String(t.impairment.delayMs), "0", String(t.impairment.jitterMs), params],
        netns: cloudNs,
        log,
      });
      await waitForLog(log, from, /nfq-netem: queue=/);
    }
  }
  await run(inNs(["iptables-restore", "--noflush"]), { input: renderDelayRules(targets) });
  const jump = await run(inNs(["iptables", "-t", "mangle", "-C", "POSTROUTING", "-j", DELAY_CHAIN]), { allowFailure: true });
  if (jump.exitCode !== 0) await run(inNs(["iptables", "-t", "mangle", "-A", "POSTROUTING", "-j", DELAY_CHAIN]));
  for (const t of targets.filter((x) => !hasDelay(x))) await ctx.procs.stop(nfqKey(t));

  for (const t of targets) {
    const tc = inNs(["tc", "qdisc"]);
    if (t.impairment.rateMbit !== null)
      await run([...tc, "replace", "dev", t.cloudIf, "root", "tbf", ...tbfArgs(t.impairment.rateMbit)]);
    else await run([...tc, "del", "dev", t.cloudIf, "root"], { allowFailure: true });
  }
}
