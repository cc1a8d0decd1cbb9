/**
 * The generated password of the first administrator must not end up in a log
 * file (journald, a container log collector, a redirected stdout). It is
 * printed only when standard output is a terminal, where a person reads it;
 * otherwise it is written to a 0600 file in the data directory and the log
 * names the file. TERN_DATA_DIR is used on PostgreSQL too (created 0700 if
 * missing, as for the server key file).
 */
import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";

export const INITIAL_PASSWORD_FILE = "initial-admin-password";

export interface InitialPassword {
  email: string;
  password: string;
  /** The server's base URL, for the login example. */
  url: string;
  docsUrl: string;
}

export interface AnnounceTarget {
  /** Whether standard output is a terminal (process.stdout.isTTY). */
  isTTY: boolean;
  /** Writes to standard output. */
  print(text: string): void;
  dataDir: string;
  logger: Logger;
}

export type Announced = { printed: true } | { file: string } | { error: string };

function loginHelp(p: InitialPassword, password: string): string[] {
  return [
    `    username: ${p.email}`,
    `    password: ${password}`,
    "  Log in, then change it (POST /api/users/password):",
    `    curl -s -X POST ${p.url}/api/users/login -H 'content-type: application/json' \\`,
    `      -d '{"username":"${p.email}","password":"<password>"}'`,
    `  API docs: ${p.docsUrl}`,
  ];
}

export async function announceInitialPassword(p: InitialPassword, target: AnnounceTarget): Promise<Announced> {
  if (target.isTTY) {
    target.print(
      [
        "",
        "  First start: created the administrator account.",
        ...loginHelp(p, p.password),
        "  It is shown only now.",
        "",
        "",
      ].join("\n"),
    );
    return { printed: true };
  }
  const file = path.resolve(target.dataDir, INITIAL_PASSWORD_FILE);
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(
      temp,
      `${["First start: the administrator account of this Tern server.", ...loginHelp(p, p.password), "Delete this file once you have changed the password."].join("\n")}\n`,
      {
        mode: 0o600,
        flag: "w",
      },
    );
    // The mode of writeFile is filtered by the umask; make sure it is exactly 0600.
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (err) {
    target.logger.error(
      { err, file, email: p.email },
      "created the administrator, but could not write its generated password: set TERN_ADMIN_PASSWORD on an empty database, or reset the password by e-mail",
    );
    return { error: (err as Error).message };
  }
  target.logger.warn(
    { file, email: p.email },
    `created the administrator; its generated password is in ${file} (mode 0600): log in, change it, delete the file`,
  );
  return { file };
}
