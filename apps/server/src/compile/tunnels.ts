/**
 * Tunnels the device is an end of: device-to-device IKEv2 with the reference
 * defaults and a per-tunnel PSK, or device-to-peer with the peer's parameters.
 * Loopbacks come from the organization's tunnel range; side A takes the first
 * address of the /31, side B the second; A initiates (always the device for peers).
 */
import { type ConfigTunnel, type DeviceInterface, parseCidr, tunnelLoopbacks } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { findById, publishedSubnets } from "./device-networks.ts";
import { DEVICE_TUNNEL_ESP, DEVICE_TUNNEL_IKE, DPD_SECONDS, espProposal, ikeIdentity, ikeProposal } from "./ike-proposals.ts";
import type { CompileTunnel, DeviceTunnelInput, PeerTunnelInput, TunnelEndDevice } from "./input.ts";
import { compareCidr, compareIPv4, compareText, sortedUnique } from "./order.ts";
import { defaultLocalIdentity, remoteAddressFor } from "./tunnel-endpoints.ts";

type Skip = { skip: string };

export function compileTunnels(ctx: CompileContext): ConfigTunnel[] {
  const range = parseCidr(ctx.input.organization.tunnelRange);
  const out: ConfigTunnel[] = [];
  for (const tunnel of ctx.input.tunnels) {
    const subject = { type: "tunnel" as const, id: tunnel.id };
    const path = `tunnels.${tunnel.id}`;
    const pair = range ? tunnelLoopbacks(range, tunnel.num) : null;
    if (pair === null) {
      ctx.warn({
        path,
        subject,
        message: `tunnel ${tunnel.num} left out: its number has no loopback pair in the tunnel range ${ctx.input.organization.tunnelRange}`,
      });
      continue;
    }
    const result = tunnel.kind === "device" ? deviceTunnel(ctx, tunnel, pair) : peerTunnel(ctx, tunnel, pair);
    if ("skip" in result) ctx.warn({ path, subject, message: `tunnel ${tunnel.num} left out: ${result.skip}` });
    else out.push(result);
  }
  return out.sort((a, b) => a.num - b.num || compareText(a.id, b.id));
}

/** The tunnel's WAN interface on a device, or why it cannot carry the tunnel. */
function wanInterface(device: TunnelEndDevice, interfaceId: string): DeviceInterface | Skip {
  const iface = findById(device.interfaces, interfaceId);
  if (!iface) return { skip: `device ${device.name} has no interface ${interfaceId}` };
  if (!iface.isAssigned || iface.type !== "WAN")
    return { skip: `interface ${iface.name} of ${device.name} is not an assigned WAN interface` };
  return iface;
}

function pathLabelOf(ctx: CompileContext, tunnel: CompileTunnel): string | null {
  if (tunnel.pathlabel === null) return null;
  if (ctx.pathLabelIds.has(tunnel.pathlabel)) return tunnel.pathlabel;
  ctx.warn({
    path: `tunnels.${tunnel.id}.pathlabel`,
    message: `path label ${tunnel.pathlabel} does not exist; tunnel carries none`,
  });
  return null;
}

const networks = (list: readonly string[]) => sortedUnique(list, compareCidr);

function deviceTunnel(ctx: CompileContext, tunnel: DeviceTunnelInput, [loopA, loopB]: [string, string]): ConfigTunnel | Skip {
  const self = ctx.input.device;
  const isA = tunnel.a.device.id === self.id;
  if (!isA && tunnel.b.device.id !== self.id) return { skip: `device ${self.name} is not an end of it` };
  const [localEnd, remoteEnd] = isA ? [tunnel.a, tunnel.b] : [tunnel.b, tunnel.a];
  // The device being compiled is the source of truth for its own side.
  const localIf = wanInterface(self, localEnd.interfaceId);
  if ("skip" in localIf) return localIf;
  const remoteIf = wanInterface(remoteEnd.device, remoteEnd.interfaceId);
  if ("skip" in remoteIf) return remoteIf;
  const remoteAddress = remoteAddressFor(localIf, remoteIf);
  if (remoteAddress === null) return { skip: `waiting for the address of ${remoteEnd.device.name} ${remoteIf.name}` };
  const [idA, idB] = [`tern-${tunnel.num}-a`, `tern-${tunnel.num}-b`];
  return {
    id: tunnel.id,
    num: tunnel.num,
    kind: "device",
    localInterface: localIf.name,
    localAddress: localIf.IPv4 || null,
    remoteAddress,
    localLoopback: isA ? loopA : loopB,
    remoteLoopback: isA ? loopB : loopA,
    ike: { ...DEVICE_TUNNEL_IKE },
    esp: { ...DEVICE_TUNNEL_ESP },
    auth: { psk: tunnel.psk, localId: isA ? idA : idB, remoteId: isA ? idB : idA },
    initiator: isA,
    dpdSeconds: DPD_SECONDS,
    localSubnets: publishedSubnets(self),
    remoteSubnets: publishedSubnets(remoteEnd.device),
    probeTargets: [isA ? loopB : loopA],
    pathLabel: pathLabelOf(ctx, tunnel),
  };
}

function peerTunnel(ctx: CompileContext, tunnel: PeerTunnelInput, [loopA, loopB]: [string, string]): ConfigTunnel | Skip {
  const self = ctx.input.device;
  if (tunnel.a.device.id !== self.id) return { skip: `device ${self.name} is not its device end` };
  const localIf = wanInterface(self, tunnel.a.interfaceId);
  if ("skip" in localIf) return localIf;
  const peer = tunnel.peer;
  return {
    id: tunnel.id,
    num: tunnel.num,
    kind: "peer",
    localInterface: localIf.name,
    localAddress: localIf.IPv4 || null,
    remoteAddress: peer.remoteIP,
    localLoopback: loopA,
    remoteLoopback: loopB,
    ike: { proposal: ikeProposal(peer), lifetimeSeconds: peer.ikeLifeTime },
    esp: { proposal: espProposal(peer), lifetimeSeconds: peer.sessionLifeTime, pfs: peer.pfs },
    auth: {
      psk: peer.psk,
      localId: peer.localId ? ikeIdentity(peer.idType, peer.localId) : defaultLocalIdentity(localIf),
      remoteId: peer.remoteId ? ikeIdentity(peer.remoteIdType, peer.remoteId) : peer.remoteIP,
    },
    initiator: true,
    dpdSeconds: peer.dpdDelay,
    // Absent means IKEv2, so configs of IKEv2 peers hash as before the field existed.
    ...(peer.ikeVersion === 1 ? { ikeVersion: 1 as const } : {}),
    localSubnets: peer.localTrafficSelectors.length > 0 ? networks(peer.localTrafficSelectors) : publishedSubnets(self),
    remoteSubnets: networks(peer.remoteTrafficSelectors),
    probeTargets: sortedUnique(peer.ips, compareIPv4),
    pathLabel: pathLabelOf(ctx, tunnel),
  };
}
