/** What a lab looks like right now: nodes and their namespaces, links and their impairment, processes and whether they live. */
import { listNetns } from "@tern/netlab";
import { formatImpairment } from "./impair/index.ts";
import { describeBackend } from "./impair/probe.ts";
import type { Lab } from "./lab.ts";
import { isAlive } from "./supervisor.ts";

export interface LabStatus {
  name: string;
  id: string;
  status: string;
  dir: string;
  topologyFile: string;
  createdAt: string;
  impairment: string | null;
  nodes: { name: string; kind: string; netns: string; present: boolean; interfaces: string[] }[];
  links: { id: string; cloudIf: string; impairment: string; queue: number }[];
  processes: { key: string; role: string; pid: number; alive: boolean; netns: string | null; log: string }[];
  control: {
    enabled: boolean;
    apiUrl: string | null;
    adminEmail: string | null;
    devices: Record<string, string>;
    notes: string[];
  } | null;
}

export async function labStatus(lab: Lab): Promise<LabStatus> {
  const s = lab.store.state;
  const present = new Set(await listNetns());
  const live = lab.liveImpairments();
  const ifaces = (node: string) => [
    ...lab.plan.attachments.filter((a) => a.node === node).map((a) => `${a.nodeIf} ${a.address} (${a.cloud}, gw ${a.gateway})`),
    ...lab.plan.attachments.filter((a) => a.cloud === node).map((a) => `${a.cloudIf} ${a.gateway} (to ${a.node})`),
    ...lab.plan.lanAttachments.filter((a) => a.node === node).map((a) => `${a.nodeIf} ${a.address ?? "dhcp"} (${a.lan})`),
    ...lab.plan.bridges.filter((b) => b.node === node).map((b) => `${b.ifname} bridge: ${b.ports.join(" ")}`),
  ];
  return {
    name: s.name,
    id: s.id,
    status: s.status,
    dir: lab.dir,
    topologyFile: s.topologyFile,
    createdAt: s.createdAt,
    impairment: s.impairment ? describeBackend(s.impairment) : null,
    nodes: lab.plan.nodes.map((n) => {
      const netns = s.namespaces[n.name] ?? "";
      return { name: n.name, kind: n.kind, netns, present: present.has(netns), interfaces: ifaces(n.name) };
    }),
    links: lab.plan.attachments.map((a) => ({
      id: a.id,
      cloudIf: a.cloudIf,
      impairment: formatImpairment(live[a.id]!),
      queue: a.queue,
    })),
    processes: await Promise.all(
      s.processes.map(async (p) => ({
        key: p.key,
        role: p.role,
        pid: p.pid,
        alive: await isAlive(p),
        netns: p.netns,
        log: p.log,
      })),
    ),
    control: s.control,
  };
}

export function formatStatus(st: LabStatus): string[] {
  const out = [
    `lab ${st.name} (id ${st.id}): ${st.status}, since ${st.createdAt}`,
    `  topology: ${st.topologyFile}`,
    `  state:    ${st.dir}`,
    `  impairment mechanism: ${st.impairment ?? "not chosen yet"}`,
    "nodes:",
  ];
  for (const n of st.nodes) {
    out.push(`  ${n.name.padEnd(14)} ${n.kind.padEnd(7)} ${n.netns}${n.present ? "" : "  (MISSING)"}`);
    for (const i of n.interfaces) out.push(`      ${i}`);
  }
  out.push("links (impairment applies to packets the cloud sends toward the node):");
  for (const l of st.links) out.push(`  ${l.id.padEnd(24)} ${l.impairment}`);
  out.push("processes:");
  if (st.processes.length === 0) out.push("  none");
  for (const p of st.processes)
    out.push(`  ${p.key.padEnd(28)} pid ${String(p.pid).padEnd(8)} ${p.alive ? "running" : "DEAD"}  log ${p.log}`);
  if (st.control?.enabled) {
    out.push(`control: API ${st.control.apiUrl}/api, admin ${st.control.adminEmail} (password in ${st.dir}/credentials.json)`);
    for (const [edge, id] of Object.entries(st.control.devices)) out.push(`  device ${edge.padEnd(14)} ${id}`);
  } else out.push("control: not started (--no-control)");
  out.push("enter a node: npm run lab -- exec <node>   (or: ip netns exec <netns> <command>)");
  return out;
}
