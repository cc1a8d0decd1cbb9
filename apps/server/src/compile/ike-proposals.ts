/** IKEv2 parameters: the device-to-device defaults and strongSwan proposal strings from a peer's fields. */
import type { PeerSettings } from "@tern/protocol";

/**
 * Device-to-device tunnels (REFERENCE.md, flexiWAN 6.3): IKE aes256/sha256/modp2048 with a
 * 28800 s phase-1 lifetime, ESP the same suite with PFS and a 3600 s phase-2 lifetime.
 */
export const DEVICE_TUNNEL_IKE = { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 } as const;
export const DEVICE_TUNNEL_ESP = { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 3600, pfs: true } as const;
/** Dead peer detection interval; strongSwan's `dpd_delay` (the lab uses 10 s). */
export const DPD_SECONDS = 10;

type Alg = Pick<PeerSettings, "ikeCryptoAlg" | "ikeKeySize" | "ikeIntegAlg" | "ikeDhGroup">;

/**
 * IKE proposal: `aes256-sha256-modp2048` for CBC; GCM is an AEAD cipher with no
 * separate integrity algorithm, but IKE still needs a PRF: `aes256gcm16-prfsha256-modp2048`.
 */
export function ikeProposal(p: Alg): string {
  const cipher = p.ikeCryptoAlg === "aes-gcm" ? `aes${p.ikeKeySize}gcm16` : `aes${p.ikeKeySize}`;
  const integ = p.ikeCryptoAlg === "aes-gcm" ? `prf${p.ikeIntegAlg}` : p.ikeIntegAlg;
  return `${cipher}-${integ}-${p.ikeDhGroup}`;
}

/**
 * ESP proposal: `aes256-sha256` (CBC) or `aes256gcm16` (GCM, no integrity and no PRF in ESP),
 * followed by the DH group only with PFS, which makes rekeyed CHILD_SAs run a fresh exchange.
 */
export function espProposal(p: Pick<PeerSettings, "espCryptoAlg" | "espKeySize" | "espIntegAlg" | "espDhGroup" | "pfs">): string {
  const parts = p.espCryptoAlg === "aes-gcm" ? [`aes${p.espKeySize}gcm16`] : [`aes${p.espKeySize}`, p.espIntegAlg];
  if (p.pfs) parts.push(p.espDhGroup);
  return parts.join("-");
}

/** An IKE identity in strongSwan syntax; non-IP types get an explicit prefix so "a@b" or "123" are not guessed. */
export function ikeIdentity(type: PeerSettings["idType"], value: string): string {
  switch (type) {
    case "ip":
      return value;
    case "fqdn":
      return `fqdn:${value}`;
    case "email":
      return `email:${value}`;
    case "keyid":
      return `keyid:${value}`;
  }
}
