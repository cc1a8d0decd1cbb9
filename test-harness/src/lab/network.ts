/**
 * Builds the lab's links, bridges, addresses, routes and sysctls from a plan,
 * idempotently: existing veth pairs and bridges are kept, addresses and routes
 * use `replace`. One `ip -batch` per namespace keeps it fast; nothing is ever
 * created in the root namespace (veth ends are created directly inside their
 * namespaces).
 */
import { run } from "@tern/netlab";
import type { LabPlan } from "../plan/types.ts";
import type { Impairment } from "../topology/schema.ts";

export type NsOf = (node: string) => string;

async function linksIn(ns: string): Promise<Set<string>> {
  const r = await run(["ip", "-j", "-n", ns, "link", "show"]);
  return new Set((JSON.parse(r.stdout || "[]") as { ifname: string }[]).map((l) => l.ifname));
}

async function batch(lines: string[], ns?: string): Promise<void> {
  if (lines.length === 0) return;
  await run(ns ? ["ip", "-n", ns, "-batch", "-"] : ["ip", "-batch", "-"], { input: `${lines.join("\n")}\n` });
}

/** Runs `fn` over items with at most `limit` at a time (two cores are shared with others). */
export async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

export interface BuildOptions {
  /**
   * Tern configures the edges (a lab with a control plane): their WAN and LAN
   * addresses and routes are not set by the lab but entered through the API
   * and applied by each edge's agent, so the agent owns them (moves them,
   * removes them) as on a real router. The links are made either way.
   */
  managedEdges?: boolean;
}

/** veth pairs (created in place in both namespaces), then one batch per namespace for everything inside it. */
export async function buildNetwork(
  plan: LabPlan,
  nsOf: NsOf,
  opts: BuildOptions = {},
): Promise<{ links: number; commands: number }> {
  const managed = new Set(opts.managedEdges ? plan.edges : []);
  const present = new Map<string, Set<string>>();
  await eachLimited(plan.nodes, 4, async (n) => {
    present.set(n.name, await linksIn(nsOf(n.name)));
  });
  const has = (node: string, ifname: string) => present.get(node)?.has(ifname) ?? false;

  const create: string[] = [];
  const stale: { ns: string; ifname: string }[] = [];
  for (const l of plan.links) {
    const a = has(l.a.node, l.a.ifname);
    const b = has(l.b.node, l.b.ifname);
    if (a && b) continue;
    // Half a pair cannot come from an interrupted create (it is one netlink call): it is foreign, replace it.
    if (a) stale.push({ ns: nsOf(l.a.node), ifname: l.a.ifname });
    if (b) stale.push({ ns: nsOf(l.b.node), ifname: l.b.ifname });
    create.push(`link add name ${l.a.ifname} netns ${nsOf(l.a.node)} type veth peer name ${l.b.ifname} netns ${nsOf(l.b.node)}`);
  }
  for (const s of stale) await run(["ip", "-n", s.ns, "link", "del", "dev", s.ifname]);
  await batch(create);

  let commands = create.length;
  await eachLimited(plan.nodes, 4, async (node) => {
    const ns = nsOf(node.name);
    const lines: string[] = [];
    for (const br of plan.bridges.filter((b) => b.node === node.name)) {
      if (!has(node.name, br.ifname)) lines.push(`link add name ${br.ifname} type bridge forward_delay 0`);
      lines.push(`link set dev ${br.ifname} up`);
      for (const port of br.ports) lines.push(`link set dev ${port} master ${br.ifname}`);
    }
    const ifnames = new Set(
      plan.links
        .flatMap((l) => [l.a, l.b])
        .filter((e) => e.node === node.name)
        .map((e) => e.ifname),
    );
    const configured = !managed.has(node.name);
    for (const a of plan.addresses.filter((x) => x.node === node.name && configured))
      lines.push(`address replace ${a.cidr} dev ${a.ifname}`);
    for (const ifname of ifnames) lines.push(`link set dev ${ifname} up`);
    if (!configured) lines.push(...controlBootstrap(plan, node.name));
    for (const r of plan.routes.filter((x) => x.node === node.name && configured)) {
      lines.push(`route replace ${r.dst} via ${r.via} dev ${r.dev}${r.metric ? ` metric ${r.metric}` : ""}`);
    }
    await batch(lines, ns);
    // Routers forward; switches and hosts do not. rp_filter off: multi-WAN paths are asymmetric.
    const sysctls = [
      `net.ipv4.ip_forward=${node.forwarding ? 1 : 0}`,
      "net.ipv4.conf.all.rp_filter=0",
      "net.ipv4.conf.default.rp_filter=0",
    ];
    await run(["ip", "netns", "exec", ns, "sysctl", "-qw", ...sysctls]);
    commands += lines.length + 1;
  });
  return { links: plan.links.length, commands };
}

/**
 * A managed edge whose control link crosses a cloud must reach the management
 * node before Tern configures it (to register and fetch its config), as a
 * router reaches its server over the address its ISP gives it: its address on
 * that cloud and a host route to the management node. The agent later puts
 * the same address (and its default routes) there itself.
 */
function controlBootstrap(plan: LabPlan, node: string): string[] {
  if (plan.control.via !== "cloud") return [];
  const { cloud, address } = plan.control;
  const att = plan.attachments.find((a) => a.node === node && a.cloud === cloud);
  if (!att) return [];
  const own = plan.addresses.find((a) => a.node === node && a.ifname === att.nodeIf);
  if (!own) return [];
  return [`address replace ${own.cidr} dev ${att.nodeIf}`, `route replace ${address}/32 via ${att.gateway} dev ${att.nodeIf}`];
}

/**
 * Pings every WAN gateway and every static LAN host's gateway (3 tries):
 * proves the plan is wired. Attachments that already drop most packets (a
 * re-run of `up` on an impaired lab) are skipped; delay stretches the wait.
 */
export async function verifyNetwork(plan: LabPlan, nsOf: NsOf, live: Record<string, Impairment> = {}): Promise<number> {
  const waitFor = (id: string) => Math.ceil(((live[id]?.delayMs ?? 0) + (live[id]?.jitterMs ?? 0)) / 1000) + 1;
  const checks = [
    ...plan.attachments
      .filter((a) => (live[a.id]?.lossPercent ?? 0) < 50)
      .map((a) => ({ node: a.node, target: a.gateway, wait: waitFor(a.id) })),
    ...plan.lanAttachments
      .filter((h) => plan.nodes.find((n) => n.name === h.node)?.kind === "host" && h.address)
      .flatMap((h) => {
        const router = plan.lanAttachments.find(
          (r) => r.lan === h.lan && r.node !== h.node && r.address && isRouter(plan, r.node),
        );
        return router ? [{ node: h.node, target: router.address!.split("/")[0]!, wait: 1 }] : [];
      }),
  ];
  await eachLimited(checks, 4, async (c) => {
    for (let attempt = 1; ; attempt++) {
      const r = await run(["ip", "netns", "exec", nsOf(c.node), "ping", "-n", "-q", "-c", "1", "-W", String(c.wait), c.target], {
        allowFailure: true,
      });
      if (r.exitCode === 0) return;
      if (attempt === 3) throw new Error(`lab wiring check failed: ${c.node} cannot reach ${c.target}`);
    }
  });
  return checks.length;
}

function isRouter(plan: LabPlan, node: string): boolean {
  const kind = plan.nodes.find((n) => n.name === node)?.kind;
  return kind === "edge" || kind === "peer";
}
