/** Where the lab keeps things. Only the CLI entry reads the environment; these are the defaults it falls back to. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The monorepo root (this file is test-harness/src/lab/paths.ts). */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Default state root: `.lab/` at the repository root (git-ignored). */
export const DEFAULT_STATE_ROOT = join(REPO_ROOT, ".lab");

/** NetnsScope label of lab namespaces: `tn-lab-<id>-<node>`. */
export const NS_LABEL = "lab";

/** Compiled native helpers, shared by every lab under one state root (a build cache, kept by `down`). */
export function binDir(stateRoot: string): string {
  return join(stateRoot, ".bin");
}

/** Longest path a unix socket can have (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;
