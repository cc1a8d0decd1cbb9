/** Peer connections: IKEv2 tunnels from a device to a non-managed gateway. */
import * as z from "zod";
import { Id, IPv4, Name, Network, Timestamp } from "./common.ts";
import { PEER_PRESET_IDS, peerPreset } from "./peer-presets.ts";

export const IdType = z.enum(["ip", "fqdn", "email", "keyid"]);
export const DhGroup = z.enum(["modp2048", "modp3072", "modp4096", "ecp256", "ecp384", "curve25519"]);
export const CryptoAlg = z.enum(["aes-cbc", "aes-gcm"]);
export const KeySize = z.union([z.literal(128), z.literal(256)]);
export const IntegAlg = z.enum(["sha256", "sha384", "sha512"]);

/** IKE version: 2 unless a gateway only speaks IKEv1. */
export const IkeVersion = z.union([z.literal(1), z.literal(2)]);

/** The resolved fields of a peer (as stored and returned), with Tern's defaults. */
const peerFields = {
  name: Name,
  idType: IdType.default("ip"),
  localId: z.string().max(255).default(""),
  remoteIdType: IdType.default("ip"),
  remoteId: z.string().max(255).default(""),
  remoteIP: IPv4,
  /** Health-check targets behind the peer: probed through the tunnel. */
  urls: z.array(z.string().max(255)).max(8).default([]),
  ips: z.array(IPv4).max(8).default([]),
  ikeVersion: IkeVersion.default(2),
  ikeDhGroup: DhGroup.default("modp2048"),
  ikeCryptoAlg: CryptoAlg.default("aes-cbc"),
  ikeKeySize: KeySize.default(256),
  ikeIntegAlg: IntegAlg.default("sha256"),
  espDhGroup: DhGroup.default("modp2048"),
  espCryptoAlg: CryptoAlg.default("aes-cbc"),
  espKeySize: KeySize.default(256),
  espIntegAlg: IntegAlg.default("sha256"),
  /** Perfect forward secrecy on CHILD_SA rekeys (6.3.1). */
  pfs: z.boolean().default(false),
  /** Phase 2 (CHILD_SA) lifetime in seconds. */
  sessionLifeTime: z
    .number()
    .int()
    .min(300)
    .max(86400 * 7)
    .default(3600),
  /** Phase 1 (IKE SA) lifetime in seconds (6.3.1). */
  ikeLifeTime: z
    .number()
    .int()
    .min(300)
    .max(86400 * 30)
    .default(86400),
  /** Dead peer detection: seconds without traffic before a liveness check (0 = off). */
  dpdDelay: z.number().int().min(0).max(3600).default(10),
  localTrafficSelectors: z.array(Network).max(16).default([]),
  remoteTrafficSelectors: z.array(Network).min(1).max(16),
};

/** The fields a preset fills; given explicitly, they win over the preset. */
export const PEER_PRESET_KEYS = [
  "ikeVersion",
  "ikeDhGroup",
  "ikeCryptoAlg",
  "ikeKeySize",
  "ikeIntegAlg",
  "espDhGroup",
  "espCryptoAlg",
  "espKeySize",
  "espIntegAlg",
  "pfs",
  "sessionLifeTime",
  "ikeLifeTime",
  "dpdDelay",
] as const;

/** A peer's settings after presets and defaults: what is stored, compiled and returned. */
export const PeerSettings = z.object({
  ...peerFields,
  /** The preset the values were filled from (GET /api/peers/presets), or null. */
  preset: z.string().nullable().default(null),
});
export type PeerSettings = z.infer<typeof PeerSettings>;

/** Request fields: the preset-filled ones have no default here, so "not given" is visible to the preset. */
const requestFields = {
  ...peerFields,
  ...Object.fromEntries(PEER_PRESET_KEYS.map((k) => [k, peerFields[k].unwrap().optional()])),
  preset: z
    .string()
    .max(64)
    .nullable()
    .optional()
    .meta({
      description: `Fills ${PEER_PRESET_KEYS.join(", ")} as the vendor documents them: ${PEER_PRESET_IDS.join(", ")}. Fields given explicitly win.`,
    }),
} as unknown as typeof peerFields & { preset: z.ZodOptional<z.ZodNullable<z.ZodString>> };

const lifetimes = (p: { sessionLifeTime: number; ikeLifeTime: number }) => p.sessionLifeTime < p.ikeLifeTime;
const lifetimeError = { message: "sessionLifeTime must be shorter than ikeLifeTime", path: ["sessionLifeTime"] };

/**
 * Tern's defaults, then the preset's values, then the fields given. An unknown
 * preset is an issue at `preset` carrying the PEER_PRESET_UNKNOWN error code.
 */
function applyPreset<T extends Record<string, unknown> & { preset?: string | null }>(input: T, ctx: z.RefinementCtx) {
  const name = input.preset ?? null;
  const preset = name === null ? null : peerPreset(name);
  if (name !== null && !preset) {
    ctx.addIssue({
      code: "custom",
      path: ["preset"],
      message: `unknown preset "${name}"; one of ${PEER_PRESET_IDS.join(", ")}`,
      params: { errorCode: "PEER_PRESET_UNKNOWN" },
    });
    return z.NEVER;
  }
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const defaults = Object.fromEntries(PEER_PRESET_KEYS.map((k) => [k, peerFields[k].parse(undefined)]));
  return { ...defaults, ...(preset?.values ?? {}), ...given, preset: preset?.id ?? null } as Omit<T, "preset"> & PeerSettings;
}

export const PeerCreate = z
  .object({ ...requestFields, psk: z.string().min(8, "psk must be at least 8 characters").max(255) })
  .transform(applyPreset)
  .refine(lifetimes, lifetimeError);
export type PeerCreate = z.output<typeof PeerCreate>;
/** What a client sends to `POST /peers` (preset-filled fields optional). */
export type PeerCreateInput = z.input<typeof PeerCreate>;

/** Body of `PUT /peers/{id}`: the whole peer; `psk` may be omitted to keep the current one. */
export const PeerUpdate = z
  .object({ ...requestFields, psk: z.string().min(8).max(255).optional() })
  .transform(applyPreset)
  .refine(lifetimes, lifetimeError);
export type PeerUpdate = z.output<typeof PeerUpdate>;

/** An entry of GET /api/peers/presets. */
export const PeerPresetInfo = z.object({
  id: z.string(),
  vendor: z.string(),
  source: z.string(),
  note: z.string(),
  values: PeerSettings.pick(
    Object.fromEntries(PEER_PRESET_KEYS.map((k) => [k, true])) as Record<(typeof PEER_PRESET_KEYS)[number], true>,
  ),
});
export type PeerPresetInfo = z.infer<typeof PeerPresetInfo>;

/** A peer as returned: the PSK is never returned in clear, only whether one is set. */
export const Peer = z.object({
  id: Id,
  org: Id,
  ...PeerSettings.shape,
  pskSet: z.boolean(),
  /** Number of tunnels using this peer. */
  tunnels: z.number().int().min(0),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Peer = z.infer<typeof Peer>;

/** `PUT /peers/{id}` answer: the peer and the jobs queued for the devices with a tunnel to it. */
export const PeerUpdated = Peer.extend({ jobIds: z.array(Id) });
export type PeerUpdated = z.infer<typeof PeerUpdated>;
