/**
 * Keys derived from the server key with HKDF-SHA256, one per purpose, so a
 * leak of one derived key says nothing about the others.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export interface Keyring {
  /** HS256 key of access JWTs. */
  jwtKey: string;
  /** AES-256-GCM encryption of secrets at rest (peer PSKs, webhook secrets). `aad` binds the text to its row. */
  encrypt(plaintext: string, aad?: string): string;
  /** Throws when the text was not made by encrypt() with this server key and the same `aad`. */
  decrypt(ciphertext: string, aad?: string): string;
}

const VERSION = "v1";

function derive(serverKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", serverKey, "tern", `tern:${purpose}`, 32));
}

export function createKeyring(serverKey: Buffer): Keyring {
  if (serverKey.length !== 32) throw new Error("the server key must be 32 bytes");
  const jwtKey = derive(serverKey, "jwt-hs256").toString("base64url");
  const encKey = derive(serverKey, "aes-256-gcm-at-rest");

  return {
    jwtKey,
    encrypt(plaintext, aad = "") {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", encKey, iv);
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString("base64url")}.${body.toString("base64url")}`;
    },
    decrypt(ciphertext, aad = "") {
      const [version, ivText, bodyText] = ciphertext.split(".");
      if (version !== VERSION || !ivText || !bodyText) throw new Error("not an encrypted value of this server");
      const iv = Buffer.from(ivText, "base64url");
      const body = Buffer.from(bodyText, "base64url");
      if (iv.length !== 12 || body.length < 16) throw new Error("not an encrypted value of this server");
      const decipher = createDecipheriv("aes-256-gcm", encKey, iv);
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
    },
  };
}
