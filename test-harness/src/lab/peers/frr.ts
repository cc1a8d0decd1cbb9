/**
 * A stock FRR BGP speaker in a peer namespace: zebra and bgpd in the
 * foreground with per-instance vty, zserv, pid and config paths (several FRR
 * instances share the host), configured from the topology only.
 */
import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Netns, run } from "@tern/netlab";
import { LabError, LabErrorCode } from "../../errors.ts";
import type { PlanFrrPeer } from "../../plan/types.ts";
import { MAX_SOCKET_PATH } from "../paths.ts";
import type { ProcessTable } from "../process-table.ts";

export const FRR_DAEMONS = "/usr/lib/frr";

export function renderZebraConf(p: PlanFrrPeer): string {
  // Without this, a multihop session whose next hop is only reachable by the default route waits for NHT forever.
  return `hostname ${p.node}\nip nht resolve-via-default\n`;
}

export function renderBgpdConf(p: PlanFrrPeer): string {
  const c = p.config;
  const lines = [
    "frr defaults traditional",
    `hostname ${p.node}`,
    `router bgp ${c.asn}`,
    ` bgp router-id ${c.routerId}`,
    " no bgp ebgp-requires-policy",
    " no bgp network import-check",
  ];
  for (const n of p.neighbors) {
    lines.push(` neighbor ${n.address} remote-as ${n.remoteAs}`);
    lines.push(` neighbor ${n.address} timers ${c.keepaliveSeconds} ${c.holdSeconds}`);
    lines.push(` neighbor ${n.address} timers connect 2`);
    if (n.multihop) lines.push(` neighbor ${n.address} ebgp-multihop ${n.multihop}`);
    if (n.password) lines.push(` neighbor ${n.address} password ${n.password}`);
  }
  lines.push(" address-family ipv4 unicast");
  for (const net of c.networks) lines.push(`  network ${net}`);
  lines.push(" exit-address-family", "");
  return lines.join("\n");
}

/** `vtysh --vty_socket <dir> -c …` talks to this instance. */
export function vtyshArgv(dir: string, command: string): string[] {
  return ["vtysh", "--vty_socket", dir, "-c", command];
}

export async function startFrrPeer(p: PlanFrrPeer, ns: string, dir: string, procs: ProcessTable): Promise<void> {
  if (join(dir, "zserv.api").length > MAX_SOCKET_PATH) {
    throw new LabError(
      LabErrorCode.PREREQUISITE_MISSING,
      `socket path too long for a unix socket: ${join(dir, "zserv.api")}; use a shorter --state-dir`,
    );
  }
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o775);
  await writeFile(join(dir, "zebra.conf"), renderZebraConf(p));
  await writeFile(join(dir, "bgpd.conf"), renderBgpdConf(p));
  // The daemons drop to user frr: it must own the directory it writes sockets, pid files and logs to.
  await run(["chown", "-R", "frr:frr", dir]);
  const common = ["-u", "frr", "-g", "frr", "--vty_socket", dir, "-z", join(dir, "zserv.api"), "-P", "0"];
  const netns = new Netns(ns);
  for (const daemon of ["zebra", "bgpd"] as const) {
    await procs.ensure({
      key: `peer:${p.node}:${daemon}`,
      role: `frr-${daemon}`,
      argv: [
        join(FRR_DAEMONS, daemon),
        ...common,
        "-i",
        join(dir, `${daemon}.pid`),
        "-f",
        join(dir, `${daemon}.conf`),
        "--log",
        `file:${join(dir, `${daemon}.log`)}`,
      ],
      netns: ns,
      log: join(dir, `${daemon}.stdout`),
    });
    if (daemon === "zebra") {
      const zserv = join(dir, "zserv.api");
      await Netns.waitFor(`zebra zserv socket ${zserv}`, async () => (await stat(zserv).catch(() => null))?.isSocket() ?? false);
    }
  }
  await Netns.waitFor(
    `bgpd vty in ${dir}`,
    async () =>
      (await netns.exec(vtyshArgv(dir, "show bgp summary json"), { allowFailure: true, timeoutMs: 3000 })).exitCode === 0,
  );
}
