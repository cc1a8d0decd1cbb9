/**
 * Keys derived from the server key with HKDF-SHA256, one per purpose, so a
 * leak of one derived key says nothing about the others.
 *
 * Rotation: the keyring may also hold previous server keys
 * (TERN_SECRET_KEY_PREVIOUS). They only open: values they encrypted decrypt
 * and JWTs they signed verify until they expire, while everything new is
 * encrypted and signed with the current key. secrets/reencrypt.ts rewrites
 * the stored values with the current key, after which the previous keys can go.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export interface Keyring {
  /** HS256 key of access JWTs (signing). */
  jwtKey: string;
  /** Keys a JWT may verify with: the current one first, then the previous server keys' (their tokens expire naturally). */
  jwtVerifyKeys: readonly string[];
  /** Whether previous server keys are configured (re-encryption has work to do). */
  hasPreviousKeys: boolean;
  /** AES-256-GCM encryption of secrets at rest (peer PSKs, webhook secrets). `aad` binds the text to its row. */
  encrypt(plaintext: string, aad?: string): string;
  /** Throws when the text was not made by encrypt() with this server key (or a previous one) and the same `aad`. */
  decrypt(ciphertext: string, aad?: string): string;
  /**
   * The value encrypted with the current key, or null when it already is.
   * Throws when no key of the ring opens it.
   */
  reencrypt(ciphertext: string, aad?: string): string | null;
}

const VERSION = "v1";

function derive(serverKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", serverKey, "tern", `tern:${purpose}`, 32));
}

function open(encKey: Buffer, ciphertext: string, aad: string): string {
  const [version, ivText, bodyText] = ciphertext.split(".");
  if (version !== VERSION || !ivText || !bodyText) throw new Error("not an encrypted value of this server");
  const iv = Buffer.from(ivText, "base64url");
  const body = Buffer.from(bodyText, "base64url");
  if (iv.length !== 12 || body.length < 16) throw new Error("not an encrypted value of this server");
  const decipher = createDecipheriv("aes-256-gcm", encKey, iv);
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
}

/** `previousKeys`: older server keys that only decrypt and verify (rotation). */
export function createKeyring(serverKey: Buffer, previousKeys: readonly Buffer[] = []): Keyring {
  for (const k of [serverKey, ...previousKeys]) if (k.length !== 32) throw new Error("a server key must be 32 bytes");
  const jwtKey = derive(serverKey, "jwt-hs256").toString("base64url");
  const encKey = derive(serverKey, "aes-256-gcm-at-rest");
  const previousEncKeys = previousKeys.map((k) => derive(k, "aes-256-gcm-at-rest"));

  /** The plaintext and whether the current key opened it. */
  const openAny = (ciphertext: string, aad: string): { plaintext: string; current: boolean } => {
    try {
      return { plaintext: open(encKey, ciphertext, aad), current: true };
    } catch (err) {
      for (const key of previousEncKeys) {
        try {
          return { plaintext: open(key, ciphertext, aad), current: false };
        } catch {
          // try the next key
        }
      }
      throw err;
    }
  };

  const keyring: Keyring = {
    jwtKey,
    jwtVerifyKeys: [jwtKey, ...previousKeys.map((k) => derive(k, "jwt-hs256").toString("base64url"))],
    hasPreviousKeys: previousKeys.length > 0,
    encrypt(plaintext, aad = "") {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", encKey, iv);
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString("base64url")}.${body.toString("base64url")}`;
    },
    decrypt(ciphertext, aad = "") {
      return openAny(ciphertext, aad).plaintext;
    },
    reencrypt(ciphertext, aad = "") {
      const { plaintext, current } = openAny(ciphertext, aad);
      return current ? null : keyring.encrypt(plaintext, aad);
    },
  };
  return keyring;
}
