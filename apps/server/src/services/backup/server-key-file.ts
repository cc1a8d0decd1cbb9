/**
 * The server key as backup and restore handle it: read without generating one
 * (secrets/server-key.ts generates on first start), written atomically with
 * mode 0600, and named by a fingerprint that says nothing about the key.
 */
import { createHash, randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { SERVER_KEY_BYTES, SERVER_KEY_FILE } from "../../secrets/server-key.ts";

export interface ExistingServerKey {
  key: Buffer;
  source: "environment" | "file";
  file?: string;
}

/** The configured key (TERN_SECRET_KEY, else <data dir>/secret.key), or null when there is none yet. */
export async function readExistingServerKey(options: { secretKey?: string; dataDir: string }): Promise<ExistingServerKey | null> {
  if (options.secretKey) return { key: Buffer.from(options.secretKey, "base64"), source: "environment" };
  const file = path.resolve(options.dataDir, SERVER_KEY_FILE);
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });
  if (text === null) return null;
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== SERVER_KEY_BYTES) throw new Error(`${file}: expected ${SERVER_KEY_BYTES} bytes of base64 key material`);
  return { key, source: "file", file };
}

/** A short public name of a key (SHA-256 of the key, 16 hex digits): tells two keys apart, reveals nothing. */
export function keyFingerprint(key: Buffer): string {
  return createHash("sha256").update("tern-server-key-fingerprint").update(key).digest("hex").slice(0, 16);
}

/** Writes <dir>/secret.key (0600) through a temporary file, fsync and rename. */
export async function writeServerKeyFile(dir: string, key: Buffer): Promise<string> {
  const file = path.join(dir, SERVER_KEY_FILE);
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(tmp, "wx", 0o600);
  try {
    await handle.writeFile(`${key.toString("base64")}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return file;
}
