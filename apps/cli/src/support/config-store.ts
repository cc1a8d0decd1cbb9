/**
 * The CLI's stored login: server URL, e-mail, credentials (session tokens or
 * an access token) and the chosen organization, in
 * $XDG_CONFIG_HOME/tern/credentials.json (default ~/.config/tern), directory
 * 0700 and file 0600, written atomically (temp file, fsync, rename) so a
 * crash or a second tern run never sees half a file.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { Credentials } from "@tern/client";

export interface StoredLogin {
  server: string;
  /** Who logged in (absent for an access token). */
  email?: string;
  /** null after logout or a refused refresh: the server and e-mail stay as the next login's defaults. */
  credentials: Credentials | null;
  /** Organization chosen with `tern org use` (id and name); absent: the account's default. */
  org?: { id: string; name: string };
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), ".config");
  return path.join(base, "tern");
}

export const credentialsFile = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), "credentials.json");

export async function readLogin(file = credentialsFile()): Promise<StoredLogin | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const parsed = JSON.parse(text) as StoredLogin;
  return parsed && typeof parsed.server === "string" ? { ...parsed, credentials: parsed.credentials ?? null } : null;
}

export async function writeLogin(login: StoredLogin, file = credentialsFile()): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(temp, "wx", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(login, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(temp, 0o600);
  await rename(temp, file);
}

export async function removeLogin(file = credentialsFile()): Promise<boolean> {
  try {
    await rm(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
