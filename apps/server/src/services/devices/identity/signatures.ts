/**
 * Ed25519 signatures of devices (node:crypto). Keys travel as the 32 raw
 * bytes in base64url (the JWK `x` member); anything that is not a valid key
 * or signature simply fails verification, it never throws.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto";

function publicKeyObject(publicKey: string): KeyObject | null {
  try {
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: publicKey }, format: "jwk" });
  } catch {
    return null;
  }
}

/** True when `signature` is `publicKey`'s Ed25519 signature of `text`. */
export function verifyDeviceSignature(publicKey: string, text: string, signature: string): boolean {
  const key = publicKeyObject(publicKey);
  if (!key) return false;
  const sig = Buffer.from(signature, "base64url");
  if (sig.length !== 64) return false;
  try {
    return verify(null, Buffer.from(text, "utf8"), key, sig);
  } catch {
    return false;
  }
}
