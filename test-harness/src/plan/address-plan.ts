/**
 * The address plan: a pure function from a validated topology to every
 * namespace, veth pair, bridge, address and route of the lab. The builder only
 * executes it; the unit tests check it without root.
 */
import type { Topology } from "../topology/schema.ts";
import { planClouds } from "./clouds.ts";
import { cidr } from "./ipv4.ts";
import { planLans } from "./lans.ts";
import { planPeers } from "./peers.ts";
import { checkReferences, collectRouters, MGMT_NODE } from "./routers.ts";
import type { LabPlan, PlanControl, PlanIssue, PlanNode, PlanRoute } from "./types.ts";

export type PlanResult = { plan: LabPlan; issues: [] } | { plan: null; issues: PlanIssue[] };

/** The name of the bridge in every LAN switch namespace. */
export const BRIDGE = "br0";

export function planLab(t: Topology): PlanResult {
  const routers = collectRouters(t);
  const refIssues = checkReferences(t, routers);
  if (refIssues.length > 0) return { plan: null, issues: refIssues };

  const clouds = planClouds(t, routers);
  const lans = planLans(t, routers);
  const peers = planPeers(t, clouds.attachments, lans.attachments);
  const issues = [...clouds.issues, ...lans.issues, ...peers.issues];

  // A router's interfaces must not overlap each other, or its routing is ambiguous.
  for (const r of routers) {
    const own = [
      ...clouds.attachments
        .filter((a) => a.node === r.name)
        .map((a) => ({ cidr: a.address, path: r.wan.find((w) => w.ifname === a.nodeIf)?.path })),
      ...lans.attachments
        .filter((a) => a.node === r.name && a.address)
        .map((a) => ({ cidr: a.address!, path: r.lan.find((l) => l.ifname === a.nodeIf)?.path })),
    ];
    for (let i = 0; i < own.length; i++) {
      for (let j = 0; j < i; j++) {
        const a = cidr(own[i]!.cidr);
        const b = cidr(own[j]!.cidr);
        if (a.network <= b.broadcast && b.network <= a.broadcast)
          issues.push({ path: own[i]!.path ?? r.path, message: `${own[i]!.cidr} overlaps ${own[j]!.cidr} on '${r.name}'` });
      }
    }
  }
  if (issues.length > 0) return { plan: null, issues };

  const nodes: PlanNode[] = [
    ...t.clouds.map((c) => ({ name: c.name, kind: "cloud" as const, forwarding: true })),
    ...routers.map((r) => ({ name: r.name, kind: r.kind, forwarding: r.kind !== "mgmt" })),
    ...t.lans.map((l) => ({ name: l.name, kind: "switch" as const, forwarding: false })),
    ...lans.hosts.map((h) => ({ name: h.name, kind: "host" as const, forwarding: false })),
  ];

  const links = [
    ...clouds.attachments.map((a) => ({ a: { node: a.node, ifname: a.nodeIf }, b: { node: a.cloud, ifname: a.cloudIf } })),
    ...lans.attachments.map((a) => ({ a: { node: a.node, ifname: a.nodeIf }, b: { node: a.lan, ifname: a.portIf } })),
  ];

  const bridges = t.lans.map((l) => ({
    node: l.name,
    ifname: BRIDGE,
    ports: lans.attachments.filter((a) => a.lan === l.name).map((a) => a.portIf),
  }));

  const addresses = [
    ...clouds.attachments.flatMap((a) => [
      { node: a.node, ifname: a.nodeIf, cidr: a.address },
      { node: a.cloud, ifname: a.cloudIf, cidr: `${a.gateway}/${a.address.split("/")[1]}` },
    ]),
    ...lans.attachments.filter((a) => a.address).map((a) => ({ node: a.node, ifname: a.nodeIf, cidr: a.address! })),
  ];

  const routes: PlanRoute[] = [];
  for (const r of routers) {
    const mine = r.wan
      .map((w, i) => ({ w, i, att: clouds.attachments.find((a) => a.node === r.name && a.nodeIf === w.ifname)! }))
      .map((x) => ({ ...x, metric: x.w.spec.metric ?? 100 * (x.i + 1) }));
    const withDefault = mine.filter((x) => x.w.spec.defaultRoute);
    const primary = withDefault.reduce<(typeof mine)[number] | null>(
      (best, x) => (!best || x.metric < best.metric ? x : best),
      null,
    );
    for (const x of withDefault)
      routes.push({ node: r.name, dst: "default", via: x.att.gateway, dev: x.w.ifname, metric: x.metric });
    // Clouds are separate networks (one per ISP): a site reaches a cloud's other
    // members through its own attachment to that cloud, not its primary default route.
    for (const x of mine) {
      if (x === primary) continue;
      for (const subnet of clouds.cloudSubnets.get(x.att.cloud) ?? []) {
        if (subnet !== x.att.subnet)
          routes.push({ node: r.name, dst: subnet, via: x.att.gateway, dev: x.w.ifname, metric: x.metric });
      }
    }
  }
  for (const h of lans.hosts) {
    if (h.address && h.gateway) routes.push({ node: h.name, dst: "default", via: h.gateway, dev: "eth0" });
  }

  let control: PlanControl = { via: "local" };
  if (t.control.cloud) {
    const att = clouds.attachments.find((a) => a.node === MGMT_NODE)!;
    control = { via: "cloud", cloud: t.control.cloud, node: MGMT_NODE, address: att.address.split("/")[0]! };
  }

  return {
    plan: {
      name: t.name,
      nodes,
      links,
      bridges,
      addresses,
      routes,
      attachments: clouds.attachments,
      lanAttachments: lans.attachments,
      peers: peers.peers,
      control,
      edges: t.edges.map((e) => e.name),
    },
    issues: [],
  };
}
