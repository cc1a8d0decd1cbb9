/**
 * Peer-connection presets: the IKE/ESP proposals, IKE version, lifetimes, DPD
 * and PFS that a cloud IPsec gateway documents for the customer side. One
 * entry per vendor, each with the page it follows and what could not be
 * verified there. Values are the customer side's settings in Tern's peer
 * fields; anything not set here takes Tern's own default.
 */

/** The tunable fields a preset may fill (a subset of the peer's fields). */
export interface PeerPresetValues {
  ikeVersion: 1 | 2;
  ikeCryptoAlg: "aes-cbc" | "aes-gcm";
  ikeKeySize: 128 | 256;
  ikeIntegAlg: "sha256" | "sha384" | "sha512";
  ikeDhGroup: "modp2048" | "modp3072" | "modp4096" | "ecp256" | "ecp384" | "curve25519";
  espCryptoAlg: "aes-cbc" | "aes-gcm";
  espKeySize: 128 | 256;
  espIntegAlg: "sha256" | "sha384" | "sha512";
  espDhGroup: "modp2048" | "modp3072" | "modp4096" | "ecp256" | "ecp384" | "curve25519";
  pfs: boolean;
  ikeLifeTime: number;
  sessionLifeTime: number;
  dpdDelay: number;
}

export interface PeerPreset {
  id: string;
  vendor: string;
  /** The documentation page the values follow. */
  source: string;
  /** What the page says, what was chosen among its options, and what could not be verified. */
  note: string;
  values: PeerPresetValues;
}

export const PEER_PRESETS = [
  {
    id: "aws-site-to-site",
    vendor: "AWS Site-to-Site VPN",
    source: "https://docs.aws.amazon.com/vpn/latest/s2svpn/VPNTunnels.html",
    note:
      "Tunnel options: IKE versions ikev1|ikev2 (IKEv2 chosen); phase 1 encryption AES128|AES256|AES128-GCM-16|AES256-GCM-16, " +
      "integrity SHA1|SHA2-256|SHA2-384|SHA2-512, DH groups 2, 14-24 (AES256/SHA2-256/group 14 chosen, the same set for phase 2); " +
      "phase 1 lifetime 28800 s (900-28800, default 28800), phase 2 lifetime 3600 s (900-3600, default 3600), both from the EC2 API " +
      "VpnTunnelOptionsSpecification. PFS: phase 2 DH groups are negotiated, so PFS is on with group 14. DPD: AWS sends R-U-THERE " +
      "after 10 s without traffic and declares the peer dead after 3 unanswered (AWS knowledge center 'VPN tunnel inactivity'), " +
      "so the customer side checks every 10 s. The DPD timeout default is documented as 40 s on the tunnel options page and 30 s in " +
      "older API references; it is AWS's side and not a Tern field.",
    values: {
      ikeVersion: 2,
      ikeCryptoAlg: "aes-cbc",
      ikeKeySize: 256,
      ikeIntegAlg: "sha256",
      ikeDhGroup: "modp2048",
      espCryptoAlg: "aes-cbc",
      espKeySize: 256,
      espIntegAlg: "sha256",
      espDhGroup: "modp2048",
      pfs: true,
      ikeLifeTime: 28800,
      sessionLifeTime: 3600,
      dpdDelay: 10,
    },
  },
  {
    id: "azure-vpn-gateway",
    vendor: "Azure VPN Gateway (route-based)",
    source: "https://learn.microsoft.com/en-us/azure/vpn-gateway/vpn-gateway-about-vpn-devices",
    note:
      "IKEv2 on every route-based SKU (IKEv1 allowed except Basic, with reconnects on main-mode rekeys: " +
      "vpn-gateway-about-compliance-crypto). Custom IPsec/IKE policy options include AES256, SHA256 and DHGroup14 " +
      "(configure-ipsec-ike-policy); AES256/SHA256/DHGroup14 chosen. The default policy's lifetimes (IKE SA 28800 s, " +
      "IPsec SA 27000 s for route-based gateways), PFS off in the default policy and the 45 s DPD timeout are taken from the " +
      "'About VPN devices and IPsec/IKE parameters' page named above, which the stored copy used to build this preset did not " +
      "show in full: NOT verified. dpdDelay 15 s is derived (three checks within Azure's 45 s timeout), not a documented value.",
    values: {
      ikeVersion: 2,
      ikeCryptoAlg: "aes-cbc",
      ikeKeySize: 256,
      ikeIntegAlg: "sha256",
      ikeDhGroup: "modp2048",
      espCryptoAlg: "aes-cbc",
      espKeySize: 256,
      espIntegAlg: "sha256",
      espDhGroup: "modp2048",
      pfs: false,
      ikeLifeTime: 28800,
      sessionLifeTime: 27000,
      dpdDelay: 15,
    },
  },
  {
    id: "gcp-ha-vpn",
    vendor: "Google Cloud HA VPN",
    source: "https://cloud.google.com/network-connectivity/docs/vpn/concepts/supported-ike-ciphers",
    note:
      "Supported IKE ciphers for Classic and HA VPN; Google asks the peer to propose and accept exactly one cipher per role " +
      "and the same cipher and phase 2 lifetime on both HA tunnels. AES-CBC-256 / HMAC-SHA2-256-128 / PRF-HMAC-SHA2-256 / " +
      "DH group 14 chosen for both phases with PFS group 14. Lifetimes phase 1 36000 s (10 h) and phase 2 10800 s (3 h) are " +
      "the page's values as remembered; the stored copy showed only the page's opening: NOT verified there. Google documents " +
      "no DPD interval for the peer side; Tern's default 10 s is kept.",
    values: {
      ikeVersion: 2,
      ikeCryptoAlg: "aes-cbc",
      ikeKeySize: 256,
      ikeIntegAlg: "sha256",
      ikeDhGroup: "modp2048",
      espCryptoAlg: "aes-cbc",
      espKeySize: 256,
      espIntegAlg: "sha256",
      espDhGroup: "modp2048",
      pfs: true,
      ikeLifeTime: 36000,
      sessionLifeTime: 10800,
      dpdDelay: 10,
    },
  },
  {
    id: "cloudflare-magic-wan",
    vendor: "Cloudflare Magic WAN IPsec (cloud security edge)",
    source: "https://developers.cloudflare.com/magic-transit/reference/ipsec/",
    note:
      "IKEv2 only, and Cloudflare only answers (IKE responder): the router must initiate, as Tern's peers do. IKE SA: " +
      "AES-GCM-16 128/256 or AES-CBC-256, integrity SHA2-256, DH group 14 or 5, PRF SHA2-256/384/512; AES-CBC-256/SHA2-256/" +
      "group 14 chosen, the same suite for the Child SA. Replay protection is off by default in the Cloudflare-to-customer " +
      "direction (API field replay_protection); Tern's side keeps its anti-replay window. Cloudflare documents no lifetimes, " +
      "PFS requirement or DPD interval for the customer side in that page: Tern's defaults (86400 s / 3600 s, PFS group 14, " +
      "DPD 10 s) are used, NOT vendor-verified values.",
    values: {
      ikeVersion: 2,
      ikeCryptoAlg: "aes-cbc",
      ikeKeySize: 256,
      ikeIntegAlg: "sha256",
      ikeDhGroup: "modp2048",
      espCryptoAlg: "aes-cbc",
      espKeySize: 256,
      espIntegAlg: "sha256",
      espDhGroup: "modp2048",
      pfs: true,
      ikeLifeTime: 86400,
      sessionLifeTime: 3600,
      dpdDelay: 10,
    },
  },
] as const satisfies readonly PeerPreset[];

export type PeerPresetId = (typeof PEER_PRESETS)[number]["id"];
export const PEER_PRESET_IDS = PEER_PRESETS.map((p) => p.id) as PeerPresetId[];

/** The preset with that id, or undefined. */
export function peerPreset(id: string): PeerPreset | undefined {
  return PEER_PRESETS.find((p) => p.id === id);
}
