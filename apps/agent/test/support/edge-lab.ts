/**
 * The end-to-end lab: two edge routers (`ra`, `rb`) behind a WAN router,
 * a LAN host behind each, and a management veth from each router into the
 * test's own namespace so the fake control server (a listener on the root
 * end of router A's veth) is reachable from inside the routers. Each router
 * runs the real `tern-agent` program in standalone mode.
 *
 *          ha ── lan0 ┐                     ┌ lan0 ── hb
 *                     ra ─ wan0 ── wan ── wan0 ─ rb
 *                      └── wan1 ──┘
 *   root ns: tm<id>a ── mgmt0 (ra)   tm<id>b ── mgmt0 (rb)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Netns, NetnsScope, run } from "@tern/netlab";
import type { DaemonMode } from "../../src/drivers/driver.ts";

export const BIN = fileURLToPath(new URL("../../bin/tern-agent", import.meta.url));

export interface EdgeRouter {
  label: "a" | "b";
  ns: Netns;
  stateDir: string;
  /** The router's management address (on mgmt0). */
  mgmt: string;
  /** MAC of each of its interfaces, for `mac:` devIds. */
  macs: Record<string, string>;
}

export interface EdgeLab {
  scope: NetnsScope;
  wan: Netns;
  a: EdgeRouter;
  b: EdgeRouter;
  hostA: Netns;
  hostB: Netns;
  /** Where the control server listens (root end of router A's management veth). */
  serverAddress: string;
  cleanup(): Promise<void>;
}

/** A veth from the test's own namespace into `ns`, with an address on each end (names unique per lab). */
async function managementVeth(ns: Netns, rootName: string, rootCidr: string, nsCidr: string): Promise<void> {
  await run(["ip", "link", "add", rootName, "type", "veth", "peer", "name", "mgmt0", "netns", ns.name]);
  await run(["ip", "addr", "add", rootCidr, "dev", rootName]);
  await run(["ip", "link", "set", rootName, "up"]);
  await ns.addAddress("mgmt0", nsCidr);
  await ns.up("mgmt0");
}

/** A /24 of 100.127.0.0/16 that no interface of this namespace uses yet. */
async function freeManagementNet(seed: string): Promise<number> {
  for (let i = 0; i < 256; i++) {
    const n = (Number.parseInt(seed, 16) + i) % 256;
    const used = await run(["ip", "-4", "-o", "addr", "show", "to", `100.127.${n}.0/24`]);
    if (used.stdout.trim() === "") return n;
  }
  throw new Error("no free 100.127.x.0/24 for the management veths");
}

export async function buildEdgeLab(stateRoot: string): Promise<EdgeLab> {
  const scope = new NetnsScope("e2e");
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
  // The DHCP reservations of the configs hand these MACs fixed addresses.
  await hostA.exec(["ip", "link", "set", "dev", "eth0", "address", "02:00:00:00:0b:01"]);
  await hostB.exec(["ip", "link", "set", "dev", "eth0", "address", "02:00:00:00:0c:01"]);
  await wan.addAddress("a0", "10.100.1.1/24");
  await wan.addAddress("a1", "10.101.1.1/24");
  await wan.addAddress("b0", "10.100.2.1/24");
  await wan.sysctl("net.ipv4.ip_forward", "1");

  const n = await freeManagementNet(scope.id.slice(0, 2));
  const rootA = `tm${scope.id}a`;
  const rootB = `tm${scope.id}b`;
  await managementVeth(ra, rootA, `100.127.${n}.1/30`, `100.127.${n}.2/30`);
  await managementVeth(rb, rootB, `100.127.${n}.5/30`, `100.127.${n}.6/30`);
  // The server listens on router A's veth; router B reaches it through its own (the test's namespace routes locally).
  await rb.exec(["ip", "route", "add", `100.127.${n}.1/32`, "via", `100.127.${n}.5`, "dev", "mgmt0"]);

  return {
    scope,
    wan,
    hostA,
    hostB,
    a: { label: "a", ns: ra, stateDir: join(stateRoot, "a"), mgmt: `100.127.${n}.2`, macs: macs.a },
    b: { label: "b", ns: rb, stateDir: join(stateRoot, "b"), mgmt: `100.127.${n}.6`, macs: macs.b },
    serverAddress: `100.127.${n}.1`,
    async cleanup() {
      await scope.cleanup();
      // Deleting the namespaces took the veth pairs with them; this only catches a half-built lab.
      for (const name of [rootA, rootB]) await run(["ip", "link", "del", name], { allowFailure: true });
    },
  };
}

/** Arguments every tern-agent command of a lab router gets. */
export function agentArgs(r: EdgeRouter, mode: DaemonMode = "standalone"): string[] {
  return ["--state-dir", r.stateDir, "--mode", mode, "--hostname", `edge-${r.label}`];
}

/** Runs one tern-agent command inside the router (register, status, dump …). */
export function agentCommand(r: EdgeRouter, args: string[]) {
  return run(["ip", "netns", "exec", r.ns.name, BIN, ...args, ...agentArgs(r)], { allowFailure: true, timeoutMs: 90_000 });
}

/** `tern-agent run` inside the router, in its own process group (so kill -9 takes it whole). */
export class AgentDaemon {
  readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  constructor(readonly router: EdgeRouter) {
    // `ip netns exec` and bin/tern-agent's `env node` exec in place: the child's pid is the agent's.
    this.child = spawn(
      "ip",
      [
        "netns",
        "exec",
        router.ns.name,
        BIN,
        "run",
        ...agentArgs(router),
        "--log-level",
        "info",
        "--metrics-port",
        "9464",
        "--ui-port",
        "8088",
      ],
      { detached: true, stdio: "ignore" },
    );
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Resident set size of the agent process, in KiB. */
  async rssKb(): Promise<number> {
    const status = await readFile(`/proc/${this.pid}/status`, "utf8").catch(() => "");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  }

  /** SIGTERM and wait: a clean stop (the router stays configured). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill("SIGTERM");
    return this.exited;
  }

  /** kill -9 of the whole process group: a power cut for the agent (its daemons live on). */
  async kill9(): Promise<void> {
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await this.exited;
  }

  async logTail(lines = 30): Promise<string> {
    const log = await readFile(join(this.router.stateDir, "logs", "agent.log"), "utf8").catch(() => "");
    return log.trimEnd().split("\n").slice(-lines).join("\n");
  }
}

/** Pids in the router's namespace other than `except`, with their command names. */
/** True when one of `ancestors` is a parent, grandparent … of `pid`. */
async function descendsFrom(pid: number, ancestors: number[]): Promise<boolean> {
  let current = pid;
  for (let depth = 0; depth < 16 && current > 1; depth++) {
    const stat = await readFile(`/proc/${current}/stat`, "utf8").catch(() => "");
    // Fields after the "(comm)" part: state, ppid, …
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!Number.isInteger(ppid) || ppid <= 1) return false;
    if (ancestors.includes(ppid)) return true;
    current = ppid;
  }
  return false;
}

export async function otherProcesses(ns: Netns, except: number[]): Promise<string[]> {
  const pids = (await run(["ip", "netns", "pids", ns.name])).stdout.split(/\s+/).filter(Boolean).map(Number);
  const out: string[] = [];
  for (const pid of pids) {
    // The excepted processes and their children (tsx's esbuild service under the agent) are not daemons.
    if (except.includes(pid) || (await descendsFrom(pid, except))) continue;
    const comm = (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "")).trim();
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    // A zombie is not a running daemon (the lab's pid 1 does not reap orphans).
    if (comm && !/^\d+ \(.*\) Z /s.test(stat)) out.push(`${pid} ${comm}`);
  }
  return out;
}
