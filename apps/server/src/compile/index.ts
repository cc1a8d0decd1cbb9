export { CompileError, type CompileResult, compileDeviceConfig } from "./compile-device-config.ts";
export { cidrWithin, findByDevId, findById, interfaceAddress, lanSubnets, publishedSubnets } from "./device-networks.ts";
export { DEVICE_TUNNEL_ESP, DEVICE_TUNNEL_IKE, DPD_SECONDS, espProposal, ikeIdentity, ikeProposal } from "./ike-proposals.ts";
export type {
  CompileDevice,
  CompileInput,
  CompilePeer,
  CompileTunnel,
  CompileVrrpGroup,
  CompileWarning,
  DeviceTunnelInput,
  PeerTunnelInput,
  TunnelEnd,
  TunnelEndDevice,
} from "./input.ts";
export { isBehindNat, remoteAddressFor } from "./tunnel-endpoints.ts";
