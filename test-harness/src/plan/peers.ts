/** Resolves the non-managed peers' settings (node names to addresses, defaults from the peer's own LANs). */
import { parseIPv4 } from "@tern/protocol";
import type { Topology } from "../topology/schema.ts";
import type { PlanAttachment, PlanIssue, PlanLanAttachment, PlanPeer } from "./types.ts";

const plain = (cidrText: string) => cidrText.split("/")[0]!;

/** The WAN address of `node` in a cloud that `other` is attached to as well. */
export function addressOn(attachments: PlanAttachment[], node: string, other: string): string | null {
  const otherClouds = new Set(attachments.filter((a) => a.node === other).map((a) => a.cloud));
  const mine = attachments.find((a) => a.node === node && otherClouds.has(a.cloud));
  return mine ? plain(mine.address) : null;
}

export function planPeers(
  t: Topology,
  attachments: PlanAttachment[],
  lanAttachments: PlanLanAttachment[],
): { peers: PlanPeer[]; issues: PlanIssue[] } {
  const issues: PlanIssue[] = [];
  const peers: PlanPeer[] = [];
  t.peers.forEach((p, i) => {
    const firstWan = attachments.find((a) => a.node === p.name);
    if (!firstWan) return; // its attachment failed to plan; that issue is reported already
    const lanSubnets = t.lans
      .filter((l) => lanAttachments.some((a) => a.node === p.name && a.lan === l.name))
      .map((l) => l.subnet);
    const firstLan = lanAttachments.find((a) => a.node === p.name && a.address);
    // A node name resolves to its address on a cloud both share; an IPv4 literal is taken as is.
    const resolve = (target: string, path: (string | number)[]): { remote: string; local: string } | null => {
      if (parseIPv4(target) !== null) return { remote: target, local: plain(firstWan.address) };
      const remote = addressOn(attachments, target, p.name);
      const local = addressOn(attachments, p.name, target);
      if (!remote || !local) {
        const known = attachments.some((a) => a.node === target);
        issues.push({ path, message: known ? `'${target}' shares no cloud with '${p.name}'` : `unknown node '${target}'` });
        return null;
      }
      return { remote, local };
    };

    if (p.kind === "strongswan") {
      const s = p.strongswan;
      const ends = resolve(s.remote, ["peers", i, "strongswan", "remote"]);
      if (!ends) return;
      peers.push({
        kind: "strongswan",
        node: p.name,
        localAddress: ends.local,
        remoteAddress: ends.remote,
        config: {
          ...s,
          localId: s.localId ?? ends.local,
          remoteId: s.remoteId ?? ends.remote,
          localTs: s.localTs ?? (lanSubnets.length > 0 ? lanSubnets : [`${ends.local}/32`]),
        },
        routedRemoteTs: s.remoteTs.filter((ts) => !ts.endsWith("/0")),
        routeSource: firstLan?.address ? plain(firstLan.address) : null,
      });
    } else {
      const f = p.frr;
      const neighbors: Extract<PlanPeer, { kind: "frr" }>["neighbors"] = [];
      f.neighbors.forEach((n, k) => {
        const ends = resolve(n.address, ["peers", i, "frr", "neighbors", k, "address"]);
        if (ends) neighbors.push({ address: ends.remote, remoteAs: n.remoteAs, multihop: n.multihop, password: n.password });
      });
      peers.push({
        kind: "frr",
        node: p.name,
        config: { ...f, routerId: f.routerId ?? plain(firstWan.address), networks: f.networks ?? lanSubnets },
        neighbors,
      });
    }
  });
  return { peers, issues };
}
