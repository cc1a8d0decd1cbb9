/**
 * Device keys of simulated devices: an Ed25519 key derived from the fleet's
 * identity seed and the device index (SHA-256 of both is the private key's
 * seed), so a device keeps the same key across simulator runs (re-registering
 * the same machine ids proves the same key) and costs no stored state: the
 * key is derived when it is needed (register, connect), about 0.1 ms.
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

export function simDeviceKey(seed: string, index: number): SimKey {
  const raw = createHash("sha256").update(`tern-sim-device-key\n${seed}\n${index}`).digest();
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, raw]), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(privateKey).export({ format: "jwk" }) as { x: string };
  return { privateKey, publicKey: jwk.x };
}

/** The key's Ed25519 signature of `text`, base64url. */
export function signText(privateKey: KeyObject, text: string): string {
  return sign(null, Buffer.from(text, "utf8"), privateKey).toString("base64url");
}
