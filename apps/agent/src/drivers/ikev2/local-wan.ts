/**
 * Which WAN each tunnel's IKE and ESP leave from (the spec's limit 6, its
 * failover half). A tunnel names one WAN and leaves from that WAN's own
 * address while the WAN has carrier and an address. When it has not:
 * - a peer connection (a stock gateway, no multi-link policy of its own)
 *   follows the failover to the first other WAN of the config that is up,
 *   with that WAN's own address (source routing per WAN sends it out of that
 *   WAN), and comes back when its WAN returns. A WAN that already carries a
 *   tunnel to the same peer address is skipped: a second IKE SA with the same
 *   identities would replace that tunnel's at the peer (unique IDs);
 * - a device-to-device tunnel stays on its WAN: the far agent dials that
 *   WAN's address, and the multi-link policy moves traffic to the tunnels of
 *   other WANs instead.
 * Pure: the kernel's WAN states come in, the choice goes out.
 */
import type { ConfigTunnel } from "@tern/protocol";
import type { WanState } from "../../kernel-events/types.ts";

export interface LocalEnd {
  /** The WAN interface IKE and ESP leave through. */
  ifname: string;
  /** Its address: local_addrs. */
  address: string;
  /** True when a peer connection left its own WAN for this one. */
  failedOver: boolean;
}

const usable = (s: WanState | undefined): s is WanState & { address: string } => s?.carrier === true && s.address !== null;

/**
 * The local end of each tunnel, by tunnel id; a tunnel absent from the map
 * waits (its WAN has no address and, for a peer connection, no other WAN is up).
 * `wans` is the config's WAN interfaces in config order (the failover order).
 */
export function localEnds(
  tunnels: readonly ConfigTunnel[],
  wans: readonly string[],
  states: ReadonlyMap<string, WanState>,
): Map<string, LocalEnd> {
  const out = new Map<string, LocalEnd>();
  for (const t of tunnels) {
    const own = states.get(t.localInterface);
    if (usable(own) || t.kind !== "peer") {
      const address = own?.address ?? t.localAddress;
      if (address) out.set(t.id, { ifname: t.localInterface, address, failedOver: false });
      continue;
    }
    const samePeer = new Set(
      tunnels.filter((o) => o.id !== t.id && o.remoteAddress === t.remoteAddress).map((o) => o.localInterface),
    );
    const other = wans.find((w) => w !== t.localInterface && !samePeer.has(w) && usable(states.get(w)));
    if (other) out.set(t.id, { ifname: other, address: states.get(other)!.address!, failedOver: true });
    else {
      const address = own?.address ?? t.localAddress;
      if (address) out.set(t.id, { ifname: t.localInterface, address, failedOver: false });
    }
  }
  return out;
}
