/** Names the IKEv2 driver gives to what it owns, derived from the tunnel alone so they survive agent restarts. */
import type { ConfigTunnel } from "@tern/protocol";

/** The one TUN device kernel-libipsec creates per charon. */
export const LIBIPSEC_DEVICE = "ipsec0";
/** Label of tunnel loopback addresses on `lo`, so the driver removes only its own. */
export const LO_LABEL = "lo:tern-ike";
/** Route protocol number of tunnel routes (the links driver uses 57). */
export const IKEV2_ROUTE_PROTO = 58;
/**
 * kernel-libipsec installs routes in table 220 behind a catch-all rule that
 * hijacks LAN return traffic; a fwmark nobody sets confines that rule, and
 * the agent routes into the tunnel itself.
 */
export const LIBIPSEC_FWMARK = "0x4242";
/** Prefix of agent-owned swanctl connection names and files. */
export const CONN_PREFIX = "tern-";

export function connName(t: Pick<ConfigTunnel, "kind" | "num">): string {
  return `${CONN_PREFIX}${t.kind}-${t.num}`;
}

/** XFRM interface of a tunnel: `xfrm-d7` for device tunnel 7, `xfrm-p7` for peer 7. */
export function xfrmIfName(t: Pick<ConfigTunnel, "kind" | "num">): string {
  return `xfrm-${t.kind === "device" ? "d" : "p"}${t.num}`;
}

/** XFRM if_id (non-zero, unique per device): device tunnels 1…, peers from 2^20. */
export function xfrmIfId(t: Pick<ConfigTunnel, "kind" | "num">): number {
  return (t.kind === "peer" ? 1 << 20 : 0) + t.num + 1;
}
