/**
 * Routers are the nodes with WAN and LAN interfaces: edges, non-managed peers
 * and the management node. This collects them with their interface names and
 * checks the references every later step relies on.
 */
import type { LanAttachment, Topology, WanAttachment } from "../topology/schema.ts";
import type { NodeKind, PlanIssue } from "./types.ts";

export const MGMT_NODE = "mgmt";

export interface RouterWan {
  spec: WanAttachment;
  ifname: string;
  path: (string | number)[];
}

export interface RouterLan {
  spec: LanAttachment;
  ifname: string;
  path: (string | number)[];
}

export interface Router {
  name: string;
  kind: Extract<NodeKind, "edge" | "peer" | "mgmt">;
  wan: RouterWan[];
  lan: RouterLan[];
  path: (string | number)[];
}

/** Edges, then peers, then the management node, in file order. */
export function collectRouters(t: Topology): Router[] {
  const routers: Router[] = [];
  const add = (
    name: string,
    kind: Router["kind"],
    wan: WanAttachment[],
    lan: LanAttachment[],
    path: (string | number)[],
  ): void => {
    routers.push({
      name,
      kind,
      path,
      wan: wan.map((spec, i) => ({ spec, ifname: spec.name ?? `wan${i}`, path: [...path, "wan", i] })),
      lan: lan.map((spec, i) => ({ spec, ifname: spec.name ?? `lan${i}`, path: [...path, "lan", i] })),
    });
  };
  for (const [i, e] of t.edges.entries()) add(e.name, "edge", e.wan, e.lan, ["edges", i]);
  for (const [i, p] of t.peers.entries()) add(p.name, "peer", p.wan, p.lan, ["peers", i]);
  if (t.control.cloud) {
    add(MGMT_NODE, "mgmt", [{ cloud: t.control.cloud, defaultRoute: true, impairment: t.control.impairment }], [], ["control"]);
  }
  return routers;
}

/** Names of the LAN hosts, generated ones included, with the path of their definition. */
export interface HostSpec {
  lan: string;
  name: string;
  address?: string;
  dhcp: boolean;
  path: (string | number)[];
}

export function lanHosts(t: Topology): HostSpec[] {
  return t.lans.flatMap((lan, i): HostSpec[] =>
    typeof lan.hosts === "number"
      ? Array.from({ length: lan.hosts }, (_, k) => ({
          lan: lan.name,
          name: `${lan.name}-h${k + 1}`,
          dhcp: false,
          path: ["lans", i, "hosts"],
        }))
      : lan.hosts.map((h, k) => ({
          lan: lan.name,
          name: h.name,
          address: h.address,
          dhcp: h.dhcp,
          path: ["lans", i, "hosts", k],
        })),
  );
}

/** Unique node names, existing clouds and LANs, one attachment per cloud/LAN per router, unique interface names. */
export function checkReferences(t: Topology, routers: Router[]): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const seen = new Map<string, string>();
  const claim = (name: string, path: (string | number)[]) => {
    if (seen.has(name)) issues.push({ path, message: `name '${name}' is already used by ${seen.get(name)}` });
    else seen.set(name, path.join("."));
  };
  t.clouds.forEach((c, i) => {
    claim(c.name, ["clouds", i, "name"]);
  });
  for (const r of routers) claim(r.name, r.kind === "mgmt" ? ["control", "cloud"] : [...r.path, "name"]);
  t.lans.forEach((l, i) => {
    claim(l.name, ["lans", i, "name"]);
  });
  for (const h of lanHosts(t)) claim(h.name, typeof h.path.at(-1) === "number" ? [...h.path, "name"] : h.path);

  const clouds = new Set(t.clouds.map((c) => c.name));
  const lans = new Set(t.lans.map((l) => l.name));
  for (const r of routers) {
    const ifnames = new Set<string>(["lo"]);
    const attached = new Set<string>();
    for (const w of r.wan) {
      if (!clouds.has(w.spec.cloud)) issues.push({ path: [...w.path, "cloud"], message: `unknown cloud '${w.spec.cloud}'` });
      else if (attached.has(w.spec.cloud))
        issues.push({ path: [...w.path, "cloud"], message: `'${r.name}' is already attached to cloud '${w.spec.cloud}'` });
      attached.add(w.spec.cloud);
      if (ifnames.has(w.ifname))
        issues.push({ path: w.path, message: `interface name '${w.ifname}' is used twice in '${r.name}'` });
      ifnames.add(w.ifname);
      if (w.spec.gateway && !w.spec.address)
        issues.push({ path: [...w.path, "gateway"], message: "a gateway needs an explicit address on the same attachment" });
    }
    for (const l of r.lan) {
      if (!lans.has(l.spec.lan)) issues.push({ path: [...l.path, "lan"], message: `unknown lan '${l.spec.lan}'` });
      else if (attached.has(l.spec.lan))
        issues.push({ path: [...l.path, "lan"], message: `'${r.name}' is already attached to lan '${l.spec.lan}'` });
      attached.add(l.spec.lan);
      if (ifnames.has(l.ifname))
        issues.push({ path: l.path, message: `interface name '${l.ifname}' is used twice in '${r.name}'` });
      ifnames.add(l.ifname);
    }
  }
  return issues;
}
