/** The data directory and the server key file: present, writable, private. */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import type { ServerConfig } from "../../config.ts";
import { SERVER_KEY_FILE } from "../../secrets/server-key.ts";
import { readExistingServerKey } from "../../services/backup/server-key-file.ts";
import { type CheckResult, fail, ok, warn } from "./check.ts";

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, "0");

export async function checkDataDir(config: ServerConfig): Promise<CheckResult> {
  const name = "data directory";
  const dir = config.TERN_DATA_DIR;
  const st = await stat(dir).catch(() => null);
  if (!st && config.DATABASE_URL && config.TERN_SECRET_KEY)
    return ok(name, `${dir}: not needed (PostgreSQL, key in TERN_SECRET_KEY)`);
  if (!st) {
    const parent = path.dirname(dir);
    const writable = await access(parent, constants.W_OK).then(
      () => true,
      () => false,
    );
    return writable
      ? warn(name, `${dir} does not exist yet`, "nothing to do if this is a new server: it is created at the first start")
      : fail(
          name,
          `${dir} does not exist and ${parent} is not writable`,
          `create it for the server's user: install -d -m 700 ${dir}`,
        );
  }
  if (!st.isDirectory()) return fail(name, `${dir} is not a directory`, "point TERN_DATA_DIR at a directory");
  const writable = await access(dir, constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!writable)
    return fail(name, `${dir} is not writable by this user`, `chown it to the user the server runs as (chown -R tern: ${dir})`);
  if (st.mode & 0o007)
    return warn(
      name,
      `${dir} (mode ${octal(st.mode)}) is open to other users`,
      `chmod 700 ${dir}: it holds the server key and the database`,
    );
  return ok(name, `${dir} (mode ${octal(st.mode)})`);
}

/** The key's presence and file mode; whether it opens the data is checked with the database. */
export async function checkServerKey(
  config: ServerConfig,
  databaseExists: boolean,
): Promise<{ result: CheckResult; key: Buffer | null }> {
  const name = "server key";
  let key: Awaited<ReturnType<typeof readExistingServerKey>>;
  try {
    key = await readExistingServerKey({ secretKey: config.TERN_SECRET_KEY, dataDir: config.TERN_DATA_DIR });
  } catch (err) {
    return {
      result: fail(name, (err as Error).message, "restore secret.key from a backup (tern-server restore) or set TERN_SECRET_KEY"),
      key: null,
    };
  }
  if (!key) {
    const file = path.join(config.TERN_DATA_DIR, SERVER_KEY_FILE);
    return {
      result: databaseExists
        ? warn(
            name,
            `no TERN_SECRET_KEY and no ${file}, but the database exists`,
            "if this database had a key, put its secret.key back (from a backup) before starting: a new key cannot read what the old one encrypted",
          )
        : warn(
            name,
            `no key yet (${file})`,
            "nothing to do on a new server: it is generated at the first start; back it up then",
          ),
      key: null,
    };
  }
  if (key.source === "environment") return { result: ok(name, "TERN_SECRET_KEY"), key: key.key };
  const st = await stat(key.file!);
  if (st.mode & 0o077)
    return {
      result: fail(name, `${key.file} (mode ${octal(st.mode)}) is readable by others`, `chmod 600 ${key.file}`),
      key: key.key,
    };
  if (config.DATABASE_URL)
    return {
      result: warn(
        name,
        `${key.file}: a key file with PostgreSQL`,
        "several instances on one database need the same key: set TERN_SECRET_KEY on all of them",
      ),
      key: key.key,
    };
  return { result: ok(name, `${key.file} (mode ${octal(st.mode)})`), key: key.key };
}
