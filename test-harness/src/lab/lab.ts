/**
 * A lab that is up (or half up): its state, its plan (recomputed from the
 * copy of the topology kept in the lab directory) and handles to its
 * namespaces and processes. `lab status`, `lab impair` and the tests use it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Netns } from "@tern/netlab";
import { LabError, LabErrorCode } from "../errors.ts";
import { planLab } from "../plan/address-plan.ts";
import type { LabPlan, PlanAttachment } from "../plan/types.ts";
import { Impairment, parseTopology } from "../topology/index.ts";
import { applyImpairments } from "./impair/index.ts";
import { nativeTool } from "./native.ts";
import { binDir } from "./paths.ts";
import { ProcessTable } from "./process-table.ts";
import { acquireLock, StateStore } from "./state.ts";

export const TOPOLOGY_COPY = "topology.yaml";

export class Lab {
  readonly procs: ProcessTable;

  constructor(
    readonly stateRoot: string,
    readonly store: StateStore,
    readonly plan: LabPlan,
  ) {
    this.procs = new ProcessTable(store, markerOf(store.state.label, store.state.id));
  }

  /** Opens the lab `name` under stateRoot; LAB_NOT_FOUND when it has no state. */
  static async open(stateRoot: string, name: string): Promise<Lab> {
    const store = await StateStore.load(stateRoot, name);
    if (!store) throw new LabError(LabErrorCode.LAB_NOT_FOUND, `no lab '${name}' in ${stateRoot}`);
    const text = await readFile(join(store.dir, TOPOLOGY_COPY), "utf8");
    const planned = planLab(parseTopology(text, join(store.dir, TOPOLOGY_COPY)));
    return new Lab(stateRoot, store, planned.plan!);
  }

  get name(): string {
    return this.store.state.name;
  }

  get dir(): string {
    return this.store.dir;
  }

  /** The namespace name of a node. */
  nsName(node: string): string {
    const ns = this.store.state.namespaces[node];
    if (!ns)
      throw new LabError(
        LabErrorCode.NODE_NOT_FOUND,
        `no node '${node}' in lab '${this.name}' (nodes: ${this.plan.nodes.map((n) => n.name).join(", ")})`,
      );
    return ns;
  }

  /** A handle to run commands in a node's namespace. */
  ns(node: string): Netns {
    return new Netns(this.nsName(node));
  }

  /** The WAN address (no prefix) of `node` in `cloud` (its first one when cloud is omitted). */
  wanAddress(node: string, cloud?: string): string {
    const a = this.plan.attachments.find((x) => x.node === node && (!cloud || x.cloud === cloud));
    if (!a) throw new LabError(LabErrorCode.NODE_NOT_FOUND, `'${node}' has no WAN attachment${cloud ? ` in '${cloud}'` : ""}`);
    return a.address.split("/")[0]!;
  }

  /**
   * The attachments a link name means: `<cloud>` (all of it), `<node>` (all of
   * its WAN interfaces), `<cloud>:<node>` or `<node>:<ifname>`.
   */
  resolveLink(link: string): PlanAttachment[] {
    const [x, y] = link.split(":");
    const all = this.plan.attachments;
    const found =
      y === undefined
        ? all.filter((a) => a.cloud === x || a.node === x)
        : all.filter((a) => (a.cloud === x && a.node === y) || (a.node === x && a.nodeIf === y));
    if (found.length === 0) {
      throw new LabError(LabErrorCode.LINK_NOT_FOUND, `no link '${link}' in lab '${this.name}'`, [
        `links: ${all.map((a) => a.id).join(", ")}`,
      ]);
    }
    return found;
  }

  /** The impairment each attachment has now. */
  liveImpairments(): Record<string, Impairment> {
    return Object.fromEntries(this.plan.attachments.map((a) => [a.id, this.store.state.impairments[a.id] ?? a.impairment]));
  }

  /**
   * Changes the impairment of a live link: the given fields change, the others
   * keep their value (all reset first with `clear`). Returns the new values.
   */
  async impair(link: string, change: Partial<Impairment>, opts: { clear?: boolean } = {}): Promise<Record<string, Impairment>> {
    const targets = this.resolveLink(link);
    const live = this.liveImpairments();
    const next: Record<string, Impairment> = {};
    for (const a of targets) {
      const base = opts.clear ? Impairment.parse({}) : live[a.id]!;
      const merged = Impairment.safeParse({
        ...base,
        ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)),
      });
      if (!merged.success) {
        throw new LabError(
          LabErrorCode.IMPAIRMENT_INVALID,
          `invalid impairment for ${a.id}`,
          merged.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
        );
      }
      next[a.id] = merged.data;
    }
    const release = await acquireLock(this.dir);
    try {
      await this.store.update((s) => {
        s.impairments = { ...live, ...next };
      });
      await this.applyImpairments([...new Set(targets.map((a) => a.cloud))]);
    } finally {
      await release();
    }
    return next;
  }

  /** (Re)applies the recorded impairments to some clouds (all by default). */
  async applyImpairments(clouds?: string[]): Promise<number> {
    const backend = this.store.state.impairment?.backend ?? "emulated";
    return applyImpairments(
      this.plan,
      (n) => this.nsName(n),
      this.liveImpairments(),
      backend,
      {
        procs: this.procs,
        nfqNetem: () => nativeTool("nfq-netem", binDir(this.stateRoot)),
        dir: join(this.dir, "impair"),
      },
      clouds,
    );
  }
}

/** TERN_LAB_INSTANCE value of a lab. */
export function markerOf(label: string, id: string): string {
  return `${label}-${id}`;
}
