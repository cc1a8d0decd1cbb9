/**
 * The agent's own trust in upgrade packages: Ed25519 public keys from its settings (`upgrade-keys`, comma
 * separated, 32 bytes base64 each). No key, no upgrade: the server cannot add one, so a compromised server
 * cannot make a router run code the operator did not sign.
 */
import { createPublicKey, verify } from "node:crypto";
import { agentPackageSigningText, Ed25519PublicKey } from "@tern/protocol";
import { AgentError } from "../errors.ts";

/** Parses the setting; a malformed key is a USAGE error (better than silently trusting fewer keys). */
export function parseTrustedKeys(text: string | undefined): string[] {
  const keys = (text ?? "")
    .split(/[\s,]+/)
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of keys)
    if (!Ed25519PublicKey.safeParse(k).success || Buffer.from(k, "base64").length !== 32)
      throw new AgentError(
        "USAGE",
        `upgrade-keys: ${JSON.stringify(k.slice(0, 60))} is not an Ed25519 public key (32 bytes, base64)`,
      );
  return keys;
}

/** True when one of `keys` signed this version and checksum. */
export function signedByTrustedKey(keys: readonly string[], version: string, sha256: string, signature: string): boolean {
  const text = Buffer.from(agentPackageSigningText(version, sha256));
  const sig = Buffer.from(signature, "base64");
  return keys.some((k) => {
    try {
      const key = createPublicKey({
        key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(k, "base64").toString("base64url") },
        format: "jwk",
      });
      return verify(null, text, key, sig);
    } catch {
      return false;
    }
  });
}
