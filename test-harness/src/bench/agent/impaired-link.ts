/**
 * Two sites on one WAN cloud, built by the lab itself (topologies/two-sites.yaml,
 * network only) so the impairment is the lab's own (`lab.impair`: netem where
 * the kernel has it, nftables loss + the nfq-netem delay helper where not).
 * The cloud's default 10 ms are cleared; an impairment is then set on
 * `inet:site-b` only: it acts on the packets toward site B, so a round trip
 * from A crosses it once and the expected round-trip loss and added RTT are
 * exactly the applied figures.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { labDown } from "../../lab/down.ts";
import type { Lab } from "../../lab/lab.ts";
import { labUp } from "../../lab/up.ts";

const TOPOLOGY = fileURLToPath(new URL("../../../topologies/two-sites.yaml", import.meta.url));

export interface ImpairedLink {
  lab: Lab;
  /** Namespace names of the two sites. */
  nsA: string;
  nsB: string;
  /** Their WAN addresses on the cloud. */
  addrA: string;
  addrB: string;
  /** Sets the impairment toward site B (everything else cleared). */
  impair(lossPercent: number, delayMs: number): Promise<void>;
  down(): Promise<void>;
}

export async function upImpairedLink(): Promise<ImpairedLink> {
  const root = await mkdtemp(join(os.tmpdir(), "tern-bench-link-"));
  await chmod(root, 0o755);
  let lab: Lab | undefined;
  try {
    lab = (await labUp(TOPOLOGY, { stateRoot: root, control: false })).lab;
    const l = lab;
    await l.impair("inet", {}, { clear: true });
    return {
      lab: l,
      nsA: l.nsName("site-a"),
      nsB: l.nsName("site-b"),
      addrA: l.wanAddress("site-a"),
      addrB: l.wanAddress("site-b"),
      async impair(lossPercent, delayMs) {
        await l.impair("inet:site-b", { lossPercent, delayMs }, { clear: true });
      },
      async down() {
        await labDown(root, l.name);
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (lab) await labDown(root, lab.name).catch(() => {});
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}
