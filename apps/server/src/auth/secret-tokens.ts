/**
 * Opaque bearer secrets (refresh tokens, access tokens, and later registration
 * and device tokens): 256 random bits with a recognisable prefix, stored only
 * as a SHA-256 hash. A slow KDF is not needed for secrets of full entropy.
 */
import { createHash, randomBytes } from "node:crypto";

export const TOKEN_PREFIX = {
  refresh: "tern_rt_",
  access: "tern_at_",
} as const;

export function newSecretToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

export function hashSecretToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}
