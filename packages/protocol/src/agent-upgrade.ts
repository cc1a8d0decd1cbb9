/**
 * Staged agent upgrades (docs/upgrades.md): packages the operator signed,
 * rollouts that send them to devices, and the websocket requests that carry a
 * package to an agent (`upgrade-begin`, `upgrade-chunk`, `upgrade-install`).
 *
 * A package is a gzip tarball of what the Debian package puts under
 * /usr/lib/tern-agent (bin/, dist/, package.json) plus manifest.json. The
 * operator signs `agentPackageSigningText(version, sha256)` with an Ed25519
 * key; the server and the agent both check that signature against public keys
 * the operator gave them (the agent's own setting, so the server cannot
 * substitute a key).
 */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";
import { Filter } from "./list-query.ts";

/** Bytes of one `upgrade-chunk` at most: base64 of it stays well inside MAX_MESSAGE_BYTES. */
export const UPGRADE_CHUNK_BYTES = 512 * 1024;

/** An agent version: semver-like, safe as a directory name. */
export const AgentVersion = z
  .string()
  .min(1)
  .max(50)
  .regex(/^[0-9A-Za-z][0-9A-Za-z.+~-]*$/, "must be a version (letters, digits, . + ~ -)");

/** Hex SHA-256. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "must be a hex SHA-256");

/** An Ed25519 public key: its 32 raw bytes, base64. */
export const Ed25519PublicKey = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "must be an Ed25519 public key (32 bytes, base64)");

/** An Ed25519 signature: 64 bytes, base64. */
export const Ed25519Signature = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, "must be an Ed25519 signature (64 bytes, base64)");

/** The exact bytes the operator's key signs for a package: version and checksum, so neither can be swapped. */
export function agentPackageSigningText(version: string, sha256: string): string {
  return `tern-agent-package\nversion=${version}\nsha256=${sha256}\n`;
}

/** manifest.json inside a package. */
export const AgentPackageManifest = z.object({
  name: z.literal("tern-agent"),
  version: AgentVersion,
  builtAt: Timestamp,
});
export type AgentPackageManifest = z.infer<typeof AgentPackageManifest>;

/** What `tern-agent-package sign` writes beside a package (`<file>.sig.json`) and upload sends. */
export const AgentPackageSignature = z.strictObject({
  version: AgentVersion,
  sha256: Sha256Hex,
  signature: Ed25519Signature,
  publicKey: Ed25519PublicKey,
});
export type AgentPackageSignature = z.infer<typeof AgentPackageSignature>;

/** A public key the operator registered on the account: packages must be signed by one of these. */
export const AgentSigningKey = z.object({
  id: Id,
  name: z.string(),
  publicKey: Ed25519PublicKey,
  createdAt: Timestamp,
});
export type AgentSigningKey = z.infer<typeof AgentSigningKey>;

export const AgentSigningKeyCreate = z.strictObject({
  name: z.string().trim().min(1).max(100),
  publicKey: Ed25519PublicKey,
});

/** An uploaded package as the API lists it (the bytes stay on the server). */
export const AgentPackage = z.object({
  id: Id,
  version: AgentVersion,
  size: z.number().int().min(0),
  sha256: Sha256Hex,
  signature: Ed25519Signature,
  /** The registered key that verified the signature. */
  signingKey: Id,
  uploadedBy: z.string(),
  createdAt: Timestamp,
});
export type AgentPackage = z.infer<typeof AgentPackage>;

/** How many devices of the organization run each agent version. */
export const AgentVersionCount = z.object({
  version: z.string(),
  devices: z.number().int().min(0),
  connected: z.number().int().min(0),
});
export type AgentVersionCount = z.infer<typeof AgentVersionCount>;

/**
 * Which devices a rollout targets: ids, or filters of the device selection (services/devices/selection.ts, the
 * keys of fleet-wide acts, e.g. `{ "key": "versions.agent", "op": "==", "val": "0.1.0" }`; device tags plug in
 * there as a filter key). `filter: []` targets every device of the organization.
 */
export const RolloutTarget = z
  .strictObject({
    deviceIds: z.array(Id).min(1).max(10_000).optional(),
    filter: z.array(Filter).max(20).optional(),
  })
  .refine((s) => (s.deviceIds === undefined) !== (s.filter === undefined), {
    message: "give either deviceIds or filter ([] = every device), not both or neither",
    path: ["deviceIds"],
  });

/** A daily window (UTC, HH:MM) in which batches may start; absent: any time. */
export const MaintenanceWindow = z.strictObject({
  start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be HH:MM (UTC)"),
  end: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be HH:MM (UTC)"),
});
export type MaintenanceWindow = z.infer<typeof MaintenanceWindow>;

export const RolloutCreate = z.strictObject({
  /** The package (id) to install. */
  package: Id,
  target: RolloutTarget,
  window: MaintenanceWindow.optional(),
  /** Share of the devices upgraded first, alone; a failure among them pauses the rollout. */
  canaryPercent: z.number().int().min(0).max(100).default(10),
  batchSize: z.number().int().min(1).max(1000).default(10),
  /** How long a device has to come back healthy on the new version before it rolls back (and the server counts it failed). */
  healthTimeoutSec: z.number().int().min(10).max(3600).default(300),
});
export type RolloutCreate = z.infer<typeof RolloutCreate>;

export const RolloutState = z.enum(["running", "paused", "cancelled", "complete"]);
export type RolloutState = z.infer<typeof RolloutState>;

export const RolloutDeviceState = z.enum(["pending", "sending", "installing", "upgraded", "rolled-back", "failed", "skipped"]);
export type RolloutDeviceState = z.infer<typeof RolloutDeviceState>;

export const RolloutDevice = z.object({
  device: Id,
  name: z.string(),
  canary: z.boolean(),
  batch: z.number().int().min(0),
  state: RolloutDeviceState,
  fromVersion: z.string(),
  /** Why it failed, rolled back or was skipped. */
  detail: z.string().nullable(),
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
});
export type RolloutDevice = z.infer<typeof RolloutDevice>;

export const Rollout = z.object({
  id: Id,
  org: Id,
  package: Id,
  version: AgentVersion,
  state: RolloutState,
  /** Why it paused (a failed canary) or null. */
  pausedReason: z.string().nullable(),
  window: MaintenanceWindow.nullable(),
  canaryPercent: z.number().int(),
  batchSize: z.number().int(),
  healthTimeoutSec: z.number().int(),
  createdBy: z.string(),
  createdAt: Timestamp,
  /** Devices per state. */
  counts: z.record(RolloutDeviceState, z.number().int()),
});
export type Rollout = z.infer<typeof Rollout>;

export const RolloutReport = Rollout.extend({ devices: z.array(RolloutDevice) });
export type RolloutReport = z.infer<typeof RolloutReport>;

// --- The websocket requests (server → agent) ---

/** `upgrade-begin`: a package is coming; the agent refuses at once if it trusts no key or the signature is wrong. */
export const UpgradeBeginParams = z.object({
  /** The rollout device's id, echoed in the agent's report. */
  upgradeId: Id,
  version: AgentVersion,
  size: z
    .number()
    .int()
    .min(1)
    .max(512 * 1024 * 1024),
  sha256: Sha256Hex,
  signature: Ed25519Signature,
});
export type UpgradeBeginParams = z.infer<typeof UpgradeBeginParams>;

export const UpgradeChunkParams = z.object({
  upgradeId: Id,
  offset: z.number().int().min(0),
  data: z.string().max(Math.ceil(UPGRADE_CHUNK_BYTES / 3) * 4),
});

/** `upgrade-install`: verify what arrived, install side by side, restart into it (after answering). */
export const UpgradeInstallParams = z.object({
  upgradeId: Id,
  /** Seconds the new version has to be back and healthy before the guard restores the previous one. */
  healthTimeoutSec: z.number().int().min(10).max(3600),
});

export const UpgradeAck = z.object({ ok: z.literal(true), received: z.number().int().min(0) });

/** What an agent reports (in `status.upgrade`) about its last upgrade until the server acknowledges it by a new one. */
export const UpgradeReport = z.object({
  upgradeId: Id,
  from: z.string().max(50),
  to: z.string().max(50),
  /** `committed`: the new version is healthy; `rolled-back`: the previous version was restored. */
  outcome: z.enum(["committed", "rolled-back"]),
  detail: z.string().max(1000).optional(),
  at: Timestamp,
});
export type UpgradeReport = z.infer<typeof UpgradeReport>;
