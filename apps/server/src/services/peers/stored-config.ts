/** A peer's stored config (`peers.config`) read back with the fields added after the first peers were stored. */
import type { PeerSettings } from "@tern/protocol";

export type StoredPeerConfig = Omit<PeerSettings, "name">;

/** Values peers stored before `ikeVersion`, `dpdDelay` and `preset` existed had in effect. */
const STORED_DEFAULTS = { ikeVersion: 2, dpdDelay: 10, preset: null } as const;

/** The stored config with the later fields filled: what compile and reads use. */
export function storedPeerConfig(config: unknown): StoredPeerConfig {
  return { ...STORED_DEFAULTS, ...(config as Partial<StoredPeerConfig>) } as StoredPeerConfig;
}
