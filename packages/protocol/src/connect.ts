/**
 * Device onboarding: `POST /connect/register` with a registration token, and
 * the device identity: an Ed25519 key pair the agent makes at its first
 * registration. The server keeps only the public key; every registration and
 * every websocket connection is signed with the private key over one of the
 * texts below (each starts with its own purpose line, so a signature made for
 * one purpose is never valid for another).
 */
import * as z from "zod";
import { IfName, IPv4 } from "./common.ts";
import { InterfaceDeviceType } from "./device.ts";

export const RegisterInterface = z.object({
  devId: z.string().min(1).max(200),
  name: IfName,
  mac: z.string().max(17).default(""),
  deviceType: InterfaceDeviceType.default("ethernet"),
  IPv4: IPv4.or(z.literal("")).default(""),
  IPv4Mask: z.number().int().min(0).max(32).nullable().default(null),
  gateway: IPv4.or(z.literal("")).default(""),
  dhcp: z.boolean().default(false),
});
export type RegisterInterface = z.infer<typeof RegisterInterface>;

/** An Ed25519 public key: its 32 raw bytes in base64url (the JWK `x` member), 43 characters. */
export const DevicePublicKey = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be an Ed25519 public key (32 bytes, base64url)");
export type DevicePublicKey = z.infer<typeof DevicePublicKey>;

/** An Ed25519 signature: 64 bytes in base64url, 86 characters. */
export const DeviceSignature = z.string().regex(/^[A-Za-z0-9_-]{86}$/, "must be an Ed25519 signature (64 bytes, base64url)");

/** How far a registration proof's time may be from the server's clock. */
export const REGISTER_PROOF_MAX_SKEW_MS = 5 * 60_000;

/**
 * Proof that the registering agent holds the private key of `publicKey`: the
 * signature of `registerProofText`. `at` (ms since the epoch) must be within
 * REGISTER_PROOF_MAX_SKEW_MS of the server's clock and newer than the last
 * registration of the same key, so a captured registration cannot be replayed.
 */
export const RegisterIdentity = z.strictObject({
  publicKey: DevicePublicKey,
  at: z.number().int().positive(),
  signature: DeviceSignature,
});
export type RegisterIdentity = z.infer<typeof RegisterIdentity>;

/** The text a registration signs. */
export function registerProofText(p: { machineId: string; publicKey: string; at: number }): string {
  return `tern-device-register/v1\n${p.machineId}\n${p.publicKey}\n${p.at}`;
}

/**
 * The text a websocket hello signs: the server's one-time challenge, the
 * device id, the machine id and the websocket URL the agent connected to.
 */
export function helloProofText(p: { nonce: string; deviceId: string; machineId: string; url: string }): string {
  return `tern-device-hello/v1\n${p.nonce}\n${p.deviceId}\n${p.machineId}\n${p.url}`;
}

/** The text both the old and the new key sign to replace the device's key (bound to the link's challenge). */
export function rekeyProofText(p: { nonce: string; deviceId: string; publicKey: string }): string {
  return `tern-device-rekey/v1\n${p.nonce}\n${p.deviceId}\n${p.publicKey}`;
}

export const RegisterRequest = z.object({
  token: z.string().min(1).max(500),
  machineId: z.string().regex(/^[A-Za-z0-9._:-]{8,200}$/, "must be 8–200 characters [A-Za-z0-9._:-]"),
  hostname: z.string().min(1).max(253),
  interfaces: z.array(RegisterInterface).max(64),
  versions: z.object({ agent: z.string().max(50), protocol: z.number().int() }),
  identity: RegisterIdentity,
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({
  deviceId: z.string(),
  /** Secret the device presents on its websocket; shown once per registration. */
  deviceToken: z.string(),
  isApproved: z.boolean(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

/**
 * How long a device waits before its next websocket attempt when the server refused the upgrade
 * with a `Retry-After` (a 503 while it admits a reconnecting fleet or shuts down, a 429): the header
 * in milliseconds (delta-seconds or an HTTP date), or null when there is none or it is not valid.
 */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month ("Thu, 26 Nov 2026 07:00:04 GMT"); Date.parse alone takes "-1" too.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The shortest wait after a Retry-After, even `Retry-After: 0`: no tight loop against a server that keeps refusing. */
export const RETRY_AFTER_FLOOR_MS = 500;

/** A websocket upgrade answered with something else than 101, as the agent and the simulator read it. */
export interface UpgradeRefusal {
  /** What `ws` would have said ("Unexpected server response: 403"): the 401/403 checks read it. */
  error: string;
  /** When to try again, for a busy server (503/429 with Retry-After), at least RETRY_AFTER_FLOOR_MS; else null. */
  retryAfterMs: number | null;
}

export function upgradeRefusal(statusCode: number, retryAfter: string | string[] | undefined): UpgradeRefusal {
  const told = statusCode === 503 || statusCode === 429 ? retryAfterMs(retryAfter) : null;
  return {
    error: `Unexpected server response: ${statusCode}`,
    retryAfterMs: told === null ? null : Math.max(RETRY_AFTER_FLOOR_MS, told),
  };
}
