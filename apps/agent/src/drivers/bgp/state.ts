/** BGP state for `status` and the bgp-status request, from FRR's `show bgp summary json`. */
import type { BgpNeighborState, BgpState, ConfigBgp } from "@tern/protocol";

interface SummaryPeer {
  remoteAs?: number;
  state?: string;
  peerUptimeMsec?: number;
  pfxRcd?: number;
  pfxSnt?: number;
}
interface Summary {
  ipv4Unicast?: { routerId?: string; as?: number; peers?: Record<string, SummaryPeer> };
}

const STATES: BgpNeighborState["state"][] = ["Idle", "Connect", "Active", "OpenSent", "OpenConfirm", "Established"];

/** FRR's state text ("Idle (Admin)", "Established", …) as the protocol's enum. */
export function neighborState(text: string | undefined): BgpNeighborState["state"] {
  const word = (text ?? "").split(/\s/)[0] as BgpNeighborState["state"];
  return STATES.includes(word) ? word : "Unknown";
}

/** The protocol BgpState of the configured neighbors; `summaryJson` null means bgpd does not answer. */
export function bgpState(bgp: ConfigBgp, summaryJson: string | null): BgpState {
  let summary: Summary = {};
  if (summaryJson !== null) {
    try {
      summary = JSON.parse(summaryJson) as Summary;
    } catch {
      summary = {};
    }
  }
  const af = summary.ipv4Unicast;
  const peers = af?.peers ?? {};
  return {
    running: summaryJson !== null,
    routerId: af?.routerId ?? bgp.routerId,
    localASN: af?.as ?? bgp.asn,
    neighbors: bgp.neighbors.map((n) => {
      const p = peers[n.ip];
      const state = p ? neighborState(p.state) : "Unknown";
      return {
        ip: n.ip,
        remoteASN: p?.remoteAs ?? n.remoteAsn,
        state,
        uptimeSeconds: state === "Established" ? Math.floor((p?.peerUptimeMsec ?? 0) / 1000) : 0,
        prefixesReceived: p?.pfxRcd ?? 0,
        prefixesSent: p?.pfxSnt ?? 0,
      };
    }),
  };
}
