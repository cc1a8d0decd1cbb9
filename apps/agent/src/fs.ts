/** Atomic file writes: temp file, fsync, rename, explicit mode; unchanged content is not rewritten. */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Writes `content` to `path` atomically with `mode`. Returns false (and does
 * nothing) when the file already holds exactly `content`.
 */
export async function writeFileAtomic(path: string, content: string, mode = 0o644): Promise<boolean> {
  const current = await readFile(path, "utf8").catch(() => null);
  if (current === content) return false;
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(tmp, "w", mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  return true;
}
