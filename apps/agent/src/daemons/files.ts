/**
 * The files a driver renders, written only when their content changed, and
 * read back for the diff. Paths of RenderedFile are relative to the driver's
 * own directory (standalone) or absolute (system mode).
 */
import { readdir, readFile, rm } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import type { RenderedFile } from "../drivers/driver.ts";
import { writeFileAtomic } from "../fs.ts";

export function resolvePath(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : join(baseDir, path);
}

/** The file's text, or null when it does not exist. */
export function readText(path: string): Promise<string | null> {
  return readFile(path, "utf8").catch(() => null);
}

/** True when some file's content on disk differs from `file.content` (or the file is missing). */
export async function differs(baseDir: string, file: RenderedFile): Promise<boolean> {
  return (await readText(resolvePath(baseDir, file.path))) !== file.content;
}

/** Writes each file whose content differs; returns the paths (as given) that were written. */
export async function writeChanged(baseDir: string, files: RenderedFile[]): Promise<string[]> {
  const written: string[] = [];
  for (const f of files) {
    if (await writeFileAtomic(resolvePath(baseDir, f.path), f.content, f.mode)) written.push(f.path);
  }
  return written;
}

/** Names in `dir` ending with `suffix` (empty when the directory is missing). */
export async function listNames(dir: string, suffix = ""): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith(suffix)).sort();
}

/** Removes a path recursively; false when it did not exist. */
export async function removePath(path: string): Promise<boolean> {
  const existed = (await readdir(path).catch(() => null)) !== null || (await readText(path)) !== null;
  await rm(path, { recursive: true, force: true });
  return existed;
}
