/**
 * Ed25519 checks of agent packages with node:crypto: the operator's public key is its 32 raw bytes (base64),
 * made into a KeyObject through JWK; the signed text is the protocol's agentPackageSigningText.
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import { agentPackageSigningText } from "@tern/protocol";

/** Hex SHA-256 of the bytes. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** True when `signature` (base64) is `publicKey`'s signature of the package's version and checksum. */
export function verifyPackageSignature(publicKey: string, version: string, sha256: string, signature: string): boolean {
  try {
    const key = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey, "base64").toString("base64url") },
      format: "jwk",
    });
    return verify(null, Buffer.from(agentPackageSigningText(version, sha256)), key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}
