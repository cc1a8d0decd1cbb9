/**
 * Device keys of simulated devices: an Ed25519 key derived from the fleet's
 * identity seed and the device index (SHA-256 of both is the private key's
 * seed), so a device keeps the same key across simulator runs (re-registering
 * the same machine ids proves the same key) and costs no stored state: the
 * key is derived when it is needed (register, connect). Deriving it from its
 * PKCS#8 form costs about 0.5 ms (OpenSSL 3's decoder; measured on the bench
 * VM: 440–530 µs a key), which a fleet reconnecting 10,000 devices spent on
 * the machine it shares with the server: 5 s of CPU. With its public key
 * known (a device keeps it: 43 characters), the same key is imported as a
 * JWK in about 40 µs.
 * Only for simulators and benchmarks: anyone who knows the seed has the keys.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";

/** PKCS#8 DER of an Ed25519 private key, without its 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export interface SimKey {
  privateKey: KeyObject;
  /** base64url of the 32 raw bytes (the protocol's DevicePublicKey). */
  publicKey: string;
}

/** `publicKey`: the key's public half from an earlier derivation (SimKey.publicKey), for the fast import. */
export function simDeviceKey(seed: string, index: number, publicKey?: string): SimKey {
  const raw = createHash("sha256").update(`tern-sim-device-key\n${seed}\n${index}`).digest();
  if (publicKey !== undefined) {
    const jwk = { kty: "OKP", crv: "Ed25519", d: raw.toString("base64url"), x: publicKey };
    return { privateKey: createPrivateKey({ key: jwk, format: "jwk" }), publicKey };
  }
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, raw]), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(privateKey).export({ format: "jwk" }) as { x: string };
  return { privateKey, publicKey: jwk.x };
}

/** The key's Ed25519 signature of `text`, base64url. */
export function signText(privateKey: KeyObject, text: string): string {
  return sign(null, Buffer.from(text, "utf8"), privateKey).toString("base64url");
}
