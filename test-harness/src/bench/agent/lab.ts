/**
 * The agent benchmarks' lab: two edge routers behind a WAN router, a LAN host
 * behind each, in namespaces of one NetnsScope (the same shape as the agent's
 * own end-to-end lab). No management network: each router runs its own fake
 * gateway on its loopback (workers/agent-gateway.ts), so nothing reaches
 * outside the lab.
 *
 *          ha ── lan0 ┐                     ┌ lan0 ── hb
 *                     ra ─ wan0 ── wan ── wan0 ─ rb
 *                      └── wan1 ──┘
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { type Netns, NetnsScope, namespaceBlocker } from "@tern/netlab";
import { SkipCase } from "../types.ts";

export interface LabRouter {
  label: "a" | "b";
  ns: Netns;
  stateDir: string;
  /** MAC of each of its interfaces, for `mac:` devIds. */
  macs: Record<string, string>;
}

export interface RouterLab {
  scope: NetnsScope;
  wan: Netns;
  a: LabRouter;
  b: LabRouter;
  hostA: Netns;
  hostB: Netns;
  root: string;
  cleanup(): Promise<void>;
}

/** Commands every agent case needs besides what its drivers run. */
export const LAB_COMMANDS = ["ip", "tc", "nft", "fping", "start-stop-daemon"];
/** Daemons a full config starts. */
export const DAEMON_COMMANDS = ["charon-systemd", "swanctl", "/usr/lib/frr/zebra", "keepalived", "kea-dhcp4", "conntrack"];

/** Throws SkipCase when this machine cannot run namespace labs with `commands`. */
export function requireLab(commands: string[]): void {
  const blocker = namespaceBlocker([...LAB_COMMANDS, ...commands]);
  if (blocker !== null) throw new SkipCase(`needs root and network namespaces: ${blocker}`);
}

export async function buildRouterLab(label: string): Promise<RouterLab> {
  const root = await mkdtemp(join(os.tmpdir(), `tern-bench-${label}-`));
  // FRR drops to its own user: the state directories must be searchable (a real agent's are 0755).
  await chmod(root, 0o755);
  const scope = new NetnsScope(label);
  try {
    const wan = await scope.netns("wan");
    const ra = await scope.netns("ra");
    const rb = await scope.netns("rb");
    const hostA = await scope.netns("ha");
    const hostB = await scope.netns("hb");
    await scope.veth(ra, "wan0", wan, "a0");
    await scope.veth(ra, "wan1", wan, "a1");
    await scope.veth(rb, "wan0", wan, "b0");
    await scope.veth(ra, "lan0", hostA, "eth0");
    await scope.veth(rb, "lan0", hostB, "eth0");
    const macs = { a: {} as Record<string, string>, b: {} as Record<string, string> };
    for (const [ns, key, devs] of [
      [ra, "a", ["wan0", "wan1", "lan0"]],
      [rb, "b", ["wan0", "lan0"]],
    ] as const)
      for (const [i, dev] of devs.entries()) {
        const mac = `02:00:00:0${key === "a" ? 1 : 2}:00:0${i + 1}`;
        await ns.exec(["ip", "link", "set", "dev", dev, "address", mac]);
        macs[key][dev] = mac;
      }
    await wan.addAddress("a0", "10.100.1.1/24");
    await wan.addAddress("a1", "10.101.1.1/24");
    await wan.addAddress("b0", "10.100.2.1/24");
    await wan.sysctl("net.ipv4.ip_forward", "1");
    return {
      scope,
      wan,
      hostA,
      hostB,
      root,
      a: { label: "a", ns: ra, stateDir: join(root, "a"), macs: macs.a },
      b: { label: "b", ns: rb, stateDir: join(root, "b"), macs: macs.b },
      async cleanup() {
        // Deleting the namespaces kills what runs in them, the daemons the agents started included.
        await scope.cleanup();
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await scope.cleanup();
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}
