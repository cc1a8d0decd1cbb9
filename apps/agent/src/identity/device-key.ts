/**
 * The device key: an Ed25519 key pair made at the first registration, the
 * private half kept in the state directory (PKCS#8 PEM, mode 0600), the
 * public half (32 bytes, base64url) known to the server. Every registration
 * and every websocket hello is signed with it; the device token alone gets
 * nothing. A re-key writes the new key beside the current one first, so an
 * interrupted re-key leaves both and the server's challenge says which one it
 * holds (keyForChallenge).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { readFile, rename, stat } from "node:fs/promises";
import { AgentError } from "../errors.ts";
import { writeFileAtomic } from "../fs.ts";

export interface DeviceKey {
  privateKey: KeyObject;
  /** base64url of the 32 raw bytes (the protocol's DevicePublicKey). */
  publicKey: string;
}

function fromPrivate(privateKey: KeyObject): DeviceKey {
  const jwk = createPublicKey(privateKey).export({ format: "jwk" }) as { x?: string };
  if (privateKey.asymmetricKeyType !== "ed25519" || !jwk.x) throw new Error("not an Ed25519 key");
  return { privateKey, publicKey: jwk.x };
}

/** A new key (not yet stored). */
export function newDeviceKey(): DeviceKey {
  return fromPrivate(generateKeyPairSync("ed25519").privateKey);
}

/** The key stored at `path`, or null when there is none; a damaged or world-readable file is an error. */
export async function loadDeviceKey(path: string): Promise<DeviceKey | null> {
  const pem = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw new AgentError("NOT_REGISTERED", `cannot read the device key ${path}: ${err.code ?? err.message}`);
  });
  if (pem === null) return null;
  const mode = (await stat(path)).mode & 0o777;
  if (mode & 0o077)
    throw new AgentError(
      "NOT_REGISTERED",
      `the device key ${path} is readable by others (mode ${mode.toString(8)}): chmod 600 it, or reset the device's identity and register again`,
    );
  try {
    return fromPrivate(createPrivateKey(pem));
  } catch (err) {
    throw new AgentError("NOT_REGISTERED", `the device key ${path} is damaged (${(err as Error).message}); register again`);
  }
}

export async function saveDeviceKey(path: string, key: DeviceKey): Promise<void> {
  await writeFileAtomic(path, key.privateKey.export({ format: "pem", type: "pkcs8" }).toString(), 0o600);
}

/** The stored key, made and stored first when there is none (first registration, or an agent from before keys). */
export async function loadOrCreateDeviceKey(path: string): Promise<DeviceKey> {
  const kept = await loadDeviceKey(path);
  if (kept) return kept;
  const key = newDeviceKey();
  await saveDeviceKey(path, key);
  return key;
}

/**
 * The key to answer a challenge with: the one the server holds (`serverKey`). After an interrupted
 * re-key the new key may be the server's already: it becomes the current key. A server without a
 * key for the device (registered before keys) binds the current one.
 */
export async function keyForChallenge(
  paths: { deviceKey: string; deviceKeyNext: string },
  serverKey: string | null,
): Promise<DeviceKey> {
  const next = await loadDeviceKey(paths.deviceKeyNext).catch(() => null);
  if (next && serverKey === next.publicKey) {
    await rename(paths.deviceKeyNext, paths.deviceKey);
    return next;
  }
  return loadOrCreateDeviceKey(paths.deviceKey);
}

/** The key's Ed25519 signature of `text`, base64url. */
export function signText(key: DeviceKey, text: string): string {
  return sign(null, Buffer.from(text, "utf8"), key.privateKey).toString("base64url");
}
