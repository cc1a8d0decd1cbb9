/**
 * Where `tern-agent dump` puts its archive (the reference's fwdump "default
 * path", changed in its 6.3.1 and never documented there): the directory is
 * `--dest`, else `<state-dir>/dumps` (paths.dumps; /var/lib/tern-agent/dumps
 * on a router), and the file is
 * `tern-agent-dump-<host>-<YYYYMMDDTHHMMSSZ>.tar.gz`, the host as reported to
 * the server and the UTC time the dump started, so dumps of several routers
 * can sit in one folder and sort by time.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";

/** `20261125T154248Z`: the UTC time to the second (no separators, valid in any file system). */
export function dumpStamp(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** The archive's name without `.tar.gz`: `tern-agent-dump-<host>-<stamp>`; characters a file name should not hold become `_`. */
export function dumpBaseName(host: string, at: Date): string {
  return `tern-agent-dump-${host.replace(/[^\w.-]/g, "_")}-${dumpStamp(at)}`;
}

/**
 * The first name in `dest` not yet taken: `base`, then `base-1`, `base-2` …
 * (two dumps in one second never overwrite each other). `archive` is its path.
 */
export async function freeDumpName(dest: string, base: string): Promise<{ name: string; archive: string }> {
  let name = base;
  for (let i = 1; await exists(join(dest, `${name}.tar.gz`)); i++) name = `${base}-${i}`;
  return { name, archive: join(dest, `${name}.tar.gz`) };
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
