/**
 * A device registration as the agent sends it: signed by its machine's Ed25519
 * key (made at the machine's first registration and kept, as the agent does).
 */
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { type RegisterRequest, registerProofText } from "@tern/protocol";

/** Each machine id's device key. */
const keys = new Map<string, KeyObject>();

/** The registration signed by its machine's key (a new one for a new machine) at `at` (default now). */
export function signedRegistration(
  body: Omit<RegisterRequest, "identity"> & { identity?: unknown },
  at = Date.now(),
): RegisterRequest {
  let key = keys.get(body.machineId);
  if (!key) {
    key = generateKeyPairSync("ed25519").privateKey;
    keys.set(body.machineId, key);
  }
  const publicKey = (key.export({ format: "jwk" }) as { x: string }).x;
  const text = registerProofText({ machineId: body.machineId, publicKey, at });
  return { ...body, identity: { publicKey, at, signature: sign(null, Buffer.from(text), key).toString("base64url") } };
}
