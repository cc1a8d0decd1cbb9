/**
 * The server key: 32 random bytes from which the JWT signing key and the
 * at-rest encryption key are derived. Given as TERN_SECRET_KEY, or generated
 * once into <data dir>/secret.key (mode 0600). Every instance that shares a
 * PostgreSQL database must use the same key: set TERN_SECRET_KEY on all of them.
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

export const SERVER_KEY_BYTES = 32;
export const SERVER_KEY_FILE = "secret.key";

export interface LoadedServerKey {
  key: Buffer;
  /** Where it came from, for the start-up log (never the key itself). */
  source: "environment" | "file" | "generated";
  file?: string;
}

export async function loadServerKey(options: { secretKey?: string; dataDir: string }): Promise<LoadedServerKey> {
  if (options.secretKey) return { key: Buffer.from(options.secretKey, "base64"), source: "environment" };
  const file = path.resolve(options.dataDir, SERVER_KEY_FILE);
  const existing = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });
  if (existing !== null) {
    const key = Buffer.from(existing.trim(), "base64");
    if (key.length !== SERVER_KEY_BYTES) throw new Error(`${file}: expected ${SERVER_KEY_BYTES} bytes of base64 key material`);
    return { key, source: "file", file };
  }
  await mkdir(path.dirname(file), { recursive: true });
  const key = randomBytes(SERVER_KEY_BYTES);
  // Written whole to a private temporary file, then hard-linked into place: link() fails with EEXIST
  // when another process won the race, and a reader never sees a half-written key.
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(tmp, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return loadServerKey(options);
    throw err;
  } finally {
    await unlink(tmp).catch(() => {});
  }
  return { key, source: "generated", file };
}
