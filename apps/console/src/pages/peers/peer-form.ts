/**
 * The peer form's state and its two translations: to the API's body
 * (POST /api/peers, PUT /api/peers/{id}) and back from an API error to the
 * fields it names. The state is one flat object so that a preset (a cloud
 * gateway's known-good proposals, chosen at the top of the form) is applied as
 * one patch (applyPreset).
 */
import type { Peer, PeerPreset } from "@tern/client";
import { TernApiError } from "@tern/client";

export type IdType = NonNullable<Peer["idType"]>;
export type DhGroup = NonNullable<Peer["ikeDhGroup"]>;
export type CryptoAlg = NonNullable<Peer["ikeCryptoAlg"]>;
export type IntegAlg = NonNullable<Peer["ikeIntegAlg"]>;

export interface PeerFormState {
  name: string;
  /** The device end of the connection (create only: the tunnel to the peer). */
  device: string | null;
  iface: string | null;
  remoteIP: string;
  idType: IdType;
  localId: string;
  remoteIdType: IdType;
  remoteId: string;
  /** Empty on edit: the current key is kept unless a new one is typed. */
  psk: string;
  remoteTrafficSelectors: string[];
  localTrafficSelectors: string[];
  /** Health-check targets behind the peer, probed through the tunnel. */
  ips: string[];
  urls: string[];
  ikeCryptoAlg: CryptoAlg;
  ikeKeySize: "128" | "256";
  ikeIntegAlg: IntegAlg;
  ikeDhGroup: DhGroup;
  ikeLifeTime: number;
  espCryptoAlg: CryptoAlg;
  espKeySize: "128" | "256";
  espIntegAlg: IntegAlg;
  espDhGroup: DhGroup;
  sessionLifeTime: number;
  pfs: boolean;
  /** Not shown as inputs: carried so that a preset's (or the stored peer's) values are sent back unchanged. */
  ikeVersion: 1 | 2;
  dpdDelay: number;
  /** The preset (GET /api/peers/presets) the proposals were filled from, or null. */
  preset: string | null;
}

/** The protocol's own defaults (packages/protocol/src/peer.ts), so an untouched form sends what the API would assume. */
export const PEER_DEFAULTS: PeerFormState = {
  name: "",
  device: null,
  iface: null,
  remoteIP: "",
  idType: "ip",
  localId: "",
  remoteIdType: "ip",
  remoteId: "",
  psk: "",
  remoteTrafficSelectors: [],
  localTrafficSelectors: [],
  ips: [],
  urls: [],
  ikeCryptoAlg: "aes-cbc",
  ikeKeySize: "256",
  ikeIntegAlg: "sha256",
  ikeDhGroup: "modp2048",
  ikeLifeTime: 86400,
  espCryptoAlg: "aes-cbc",
  espKeySize: "256",
  espIntegAlg: "sha256",
  espDhGroup: "modp2048",
  sessionLifeTime: 3600,
  pfs: false,
  ikeVersion: 2,
  dpdDelay: 10,
  preset: null,
};

export const ID_TYPES: IdType[] = ["ip", "fqdn", "email", "keyid"];
export const DH_GROUPS: DhGroup[] = ["modp2048", "modp3072", "modp4096", "ecp256", "ecp384", "curve25519"];
export const CRYPTO_ALGS: CryptoAlg[] = ["aes-cbc", "aes-gcm"];
export const INTEG_ALGS: IntegAlg[] = ["sha256", "sha384", "sha512"];

/** The form of an existing peer: its fields, no key (the API never returns it). */
export function fromPeer(peer: Peer): PeerFormState {
  const d = PEER_DEFAULTS;
  return {
    ...d,
    name: peer.name,
    remoteIP: peer.remoteIP,
    idType: peer.idType ?? d.idType,
    localId: peer.localId ?? "",
    remoteIdType: peer.remoteIdType ?? d.remoteIdType,
    remoteId: peer.remoteId ?? "",
    remoteTrafficSelectors: [...peer.remoteTrafficSelectors],
    localTrafficSelectors: [...(peer.localTrafficSelectors ?? [])],
    ips: [...(peer.ips ?? [])],
    urls: [...(peer.urls ?? [])],
    ikeCryptoAlg: peer.ikeCryptoAlg ?? d.ikeCryptoAlg,
    ikeKeySize: peer.ikeKeySize === 128 ? "128" : "256",
    ikeIntegAlg: peer.ikeIntegAlg ?? d.ikeIntegAlg,
    ikeDhGroup: peer.ikeDhGroup ?? d.ikeDhGroup,
    ikeLifeTime: peer.ikeLifeTime ?? d.ikeLifeTime,
    espCryptoAlg: peer.espCryptoAlg ?? d.espCryptoAlg,
    espKeySize: peer.espKeySize === 128 ? "128" : "256",
    espIntegAlg: peer.espIntegAlg ?? d.espIntegAlg,
    espDhGroup: peer.espDhGroup ?? d.espDhGroup,
    sessionLifeTime: peer.sessionLifeTime ?? d.sessionLifeTime,
    pfs: peer.pfs ?? d.pfs,
    ikeVersion: peer.ikeVersion ?? d.ikeVersion,
    dpdDelay: peer.dpdDelay ?? d.dpdDelay,
    preset: peer.preset ?? null,
  };
}

/**
 * The form with a preset chosen: its values replace the proposal fields,
 * lifetimes, PFS, IKE version and DPD; the rest of the form is kept. The
 * fields stay editable, and what the user changes afterwards is sent
 * explicitly and wins over the preset, as on the API. `null` (None) drops the
 * preset name and keeps the values shown (they are sent as explicit fields).
 */
export function applyPreset(state: PeerFormState, preset: PeerPreset | null): PeerFormState {
  if (!preset) return { ...state, preset: null };
  const v = preset.values;
  const size = (n: 128 | 256 | undefined, fallback: "128" | "256") => (n === undefined ? fallback : n === 128 ? "128" : "256");
  return {
    ...state,
    preset: preset.id,
    ikeVersion: v.ikeVersion ?? state.ikeVersion,
    ikeCryptoAlg: v.ikeCryptoAlg ?? state.ikeCryptoAlg,
    ikeKeySize: size(v.ikeKeySize, state.ikeKeySize),
    ikeIntegAlg: v.ikeIntegAlg ?? state.ikeIntegAlg,
    ikeDhGroup: v.ikeDhGroup ?? state.ikeDhGroup,
    ikeLifeTime: v.ikeLifeTime ?? state.ikeLifeTime,
    espCryptoAlg: v.espCryptoAlg ?? state.espCryptoAlg,
    espKeySize: size(v.espKeySize, state.espKeySize),
    espIntegAlg: v.espIntegAlg ?? state.espIntegAlg,
    espDhGroup: v.espDhGroup ?? state.espDhGroup,
    sessionLifeTime: v.sessionLifeTime ?? state.sessionLifeTime,
    pfs: v.pfs ?? state.pfs,
    dpdDelay: v.dpdDelay ?? state.dpdDelay,
  };
}

/** The peer's body for POST and PUT: every field (PUT replaces the whole peer); the key only when one was typed. */
export function peerBody(s: PeerFormState) {
  return {
    name: s.name.trim(),
    remoteIP: s.remoteIP.trim(),
    idType: s.idType,
    localId: s.localId.trim(),
    remoteIdType: s.remoteIdType,
    remoteId: s.remoteId.trim(),
    remoteTrafficSelectors: s.remoteTrafficSelectors,
    localTrafficSelectors: s.localTrafficSelectors,
    ips: s.ips,
    urls: s.urls,
    ikeCryptoAlg: s.ikeCryptoAlg,
    ikeKeySize: Number(s.ikeKeySize) as 128 | 256,
    ikeIntegAlg: s.ikeIntegAlg,
    ikeDhGroup: s.ikeDhGroup,
    ikeLifeTime: s.ikeLifeTime,
    espCryptoAlg: s.espCryptoAlg,
    espKeySize: Number(s.espKeySize) as 128 | 256,
    espIntegAlg: s.espIntegAlg,
    espDhGroup: s.espDhGroup,
    sessionLifeTime: s.sessionLifeTime,
    pfs: s.pfs,
    ikeVersion: s.ikeVersion,
    dpdDelay: s.dpdDelay,
    preset: s.preset,
    ...(s.psk ? { psk: s.psk } : {}),
  };
}

export type PeerField = keyof PeerFormState;

/** The tunnel's fields (POST /api/tunnels) and the form's fields they are shown on. */
const TUNNEL_FIELDS: Record<string, PeerField> = { deviceA: "device", interfaceA: "iface" };

/**
 * The API's error spread over the fields it names (details[].path, e.g.
 * "remoteTrafficSelectors.0" → remoteTrafficSelectors), each with the machine
 * code; a name conflict goes on the name. Answers what no field took in `rest`.
 */
export function fieldErrors(
  error: unknown,
  step: "peer" | "tunnel" = "peer",
): { fields: Partial<Record<PeerField, string>>; rest: boolean } {
  const fields: Partial<Record<PeerField, string>> = {};
  if (!(error instanceof TernApiError)) return { fields, rest: error !== null && error !== undefined };
  if (step === "peer" && error.code === "CONFLICT") {
    fields.name = `${error.message} (${error.code})`;
    return { fields, rest: false };
  }
  let rest = error.details.length === 0;
  for (const detail of error.details) {
    const head = detail.path.split(".")[0] ?? "";
    const field = step === "tunnel" ? TUNNEL_FIELDS[head] : head in PEER_DEFAULTS ? (head as PeerField) : undefined;
    if (!field) {
      rest = true;
      continue;
    }
    const text = `${detail.message} (${error.code})`;
    fields[field] = fields[field] ? `${fields[field]}; ${text}` : text;
  }
  return { fields, rest };
}
