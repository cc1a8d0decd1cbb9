/**
 * The management QoS driver: marks the control link, probes, IKE and BGP in
 * `table inet tern_qos` and gives each WAN an HTB root that serves them first.
 * Owns the root qdisc only of the WAN devices it set up (recorded in
 * `runDir/qos/devices.json`); turning QoS off or losing a WAN removes exactly
 * those.
 */
import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import { writeFileAtomic } from "../../fs.ts";
import type { Runner } from "../../runner.ts";
import type { ApplyOutcome, Driver, DriverContext, DumpItem } from "../driver.ts";
import { commandItem } from "../dump.ts";
import { applyOwnedTable, scriptPath, tableScript } from "../firewall/nft-table.ts";
import { LIBIPSEC_DEVICE } from "../ikev2/names.ts";
import { QOS_TABLE, qosInput, renderQosTable, tcCommands } from "./render.ts";

type Owned = Record<string, string>;

const hash = (cmds: string[][]) =>
  createHash("sha256")
    .update(cmds.map((c) => c.join(" ")).join("\n"))
    .digest("hex");

async function readOwned(path: string): Promise<Owned> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Owned;
  } catch {
    return {};
  }
}

/** True when `dev`'s root qdisc is still the HTB `1:` this driver installs. */
async function rootIsOurs(runner: Runner, dev: string): Promise<boolean> {
  const r = await runner.run(["tc", "-j", "qdisc", "show", "dev", dev], { allowFailure: true });
  if (r.exitCode !== 0) return false;
  const qdiscs = JSON.parse(r.stdout || "[]") as { kind: string; handle: string; root?: boolean }[];
  return qdiscs.some((q) => q.root && q.kind === "htb" && q.handle === "1:");
}

const isRootQdisc = (argv: string[]) => argv[1] === "qdisc" && argv.includes("root");

export class QosDriver implements Driver {
  readonly name = "qos" as const;

  /** `withTun`: kernel-libipsec's TUN exists (the IKEv2 driver, earlier in the order, chose that dataplane). */
  render(
    config: DeviceConfig,
    controlServer?: DriverContext["controlServer"],
    withTun = false,
  ): { script: string | null; tc: Map<string, string[][]> } {
    const input = qosInput(config, controlServer);
    if (input.wans.length === 0) return { script: null, tc: new Map() };
    const tc = new Map(input.wans.map((w) => [w.name, tcCommands(w.name, w.rateKbit)]));
    if (withTun && input.tunnelRateKbit !== null) tc.set(LIBIPSEC_DEVICE, tcCommands(LIBIPSEC_DEVICE, input.tunnelRateKbit));
    return { script: tableScript(QOS_TABLE, renderQosTable(input), "management QoS marks"), tc };
  }

  async apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const dir = join(ctx.runDir, this.name);
    const ownedPath = join(dir, "devices.json");
    const tun = await ctx.runner.run(["ip", "-j", "link", "show", "dev", LIBIPSEC_DEVICE], { allowFailure: true });
    const { script, tc } = this.render(config, ctx.controlServer, tun.exitCode === 0);
    let changed = await applyOwnedTable(ctx.runner, dir, QOS_TABLE, script);
    const owned = await readOwned(ownedPath);
    const next: Owned = {};
    for (const [dev, cmds] of tc) {
      const h = hash(cmds);
      const ours = await rootIsOurs(ctx.runner, dev);
      if (owned[dev] !== h || !ours) {
        // HTB cannot `change` its root (the kernel answers "Change operation not supported"): with our
        // root in place (a new line rate) only the classes and their queues are replaced.
        for (const argv of cmds) if (!(ours && isRootQdisc(argv))) await ctx.runner.run(argv);
        changed = true;
      }
      next[dev] = h;
      // Record as we go: a failure half-way still leaves a true account of what we own.
      await writeFileAtomic(ownedPath, `${JSON.stringify({ ...owned, ...next })}\n`);
    }
    for (const dev of Object.keys(owned))
      if (!tc.has(dev)) {
        if (await rootIsOurs(ctx.runner, dev)) {
          await ctx.runner.run(["tc", "qdisc", "del", "dev", dev, "root"]);
          changed = true;
        }
      }
    if (Object.keys(next).length > 0) await writeFileAtomic(ownedPath, `${JSON.stringify(next)}\n`);
    else await rm(ownedPath, { force: true });
    return { changed };
  }

  /** The marking table and, per WAN, the qdiscs and classes with their counters. */
  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const items = [
      await commandItem(ctx, "nft-table-tern_qos.txt", ["nft", "-a", "list", "table", QOS_TABLE.family, QOS_TABLE.name]),
    ];
    for (const wan of config.interfaces.filter((i) => i.type === "WAN")) {
      items.push(await commandItem(ctx, `tc-qdisc-${wan.name}.txt`, ["tc", "-s", "qdisc", "show", "dev", wan.name]));
      items.push(await commandItem(ctx, `tc-class-${wan.name}.txt`, ["tc", "-s", "class", "show", "dev", wan.name]));
    }
    return items;
  }

  plan(config: DeviceConfig, ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">) {
    const { script, tc } = this.render(config);
    if (script === null) return { files: [], commands: [] };
    const path = scriptPath(join(ctx.runDir, this.name), QOS_TABLE);
    return {
      files: [{ path: ctx.mode === "standalone" ? "tern_qos.nft" : path, content: script, mode: 0o644 }],
      commands: [["nft", "-f", path], ...[...tc.values()].flat()],
    };
  }
}
