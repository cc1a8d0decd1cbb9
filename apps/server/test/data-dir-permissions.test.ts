/**
 * The data directory is the server's own: directory 0700, nothing in it open
 * to group or others (the embedded database, the generated server key, the
 * pid file). A looser tree stops the start with one line naming the chmod
 * that fixes it. On PostgreSQL the data directory holds the generated key.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { DataDirPermissionsError, findLoosePaths } from "../src/data-dir/permissions.ts";
import { openDatabase } from "../src/db/database.ts";
import { startServer } from "../src/server.ts";
import { createPostgresDatabase, testDatabaseKind } from "./support/test-database.ts";

const silent = pino({ level: "silent" });
const SERVER_DIR = fileURLToPath(new URL("..", import.meta.url));
const TSX = path.resolve(SERVER_DIR, "../../node_modules/.bin/tsx");

let parent: string;
let dataDir: string;
let env: Record<string, string>;
let dropDatabase: (() => Promise<void>) | null = null;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), "tern-perm-"));
  dataDir = path.join(parent, "data");
  env = { TERN_DATA_DIR: dataDir, PORT: "0", TERN_PASSWORD_HASH_COST: "10" };
  if (testDatabaseKind() === "postgres") {
    // No TERN_SECRET_KEY: the server generates its key into the data directory.
    const db = await createPostgresDatabase();
    env.DATABASE_URL = db.url;
    dropDatabase = db.drop;
  }
});
afterAll(async () => {
  await dropDatabase?.();
  await rm(parent, { recursive: true, force: true });
});

const start = () => startServer(loadConfig(env), silent);

describe("the data directory", () => {
  it("is created 0700 with every entry private, the embedded database's files included, and stays so across a restart", async () => {
    const server = await start();
    // Work that makes the database create files at run time (new relations, WAL).
    const login = await fetch(`${server.url}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        username: "admin@localhost",
        password: server.bootstrap.created ? server.bootstrap.generatedPassword : "",
      }),
    });
    expect(login.status).toBe(200);
    await server.close();

    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dataDir, "secret.key"))).mode & 0o777).toBe(0o600);
    const { loose, total } = await findLoosePaths(dataDir);
    expect(loose).toEqual([]);
    if (testDatabaseKind() === "pglite") expect(total).toBeGreaterThan(900);

    // A restart finds nothing to complain about (what PGlite created while running is private too).
    const again = await start();
    await again.close();
  }, 120_000);

  it("a file open to others stops the start with one line and the chmod that fixes it", async () => {
    const victim =
      testDatabaseKind() === "pglite" ? path.join(dataDir, "pgdata", "PG_VERSION") : path.join(dataDir, "secret.key");
    await chmod(victim, 0o666);
    const err = await start().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirPermissionsError);
    const message = (err as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain(`${victim} mode 0666`);
    expect(message).toContain(`chmod -R go-rwx '${dataDir}'`);
    await chmod(victim, 0o600);
  }, 60_000);

  it("a data directory readable by others is refused too, and the printed command is the fix", async () => {
    await chmod(dataDir, 0o755);
    await expect(start()).rejects.toThrow(
      /data directory .* is open to other users .* mode 0755\); fix it with: chmod -R go-rwx/,
    );
    await chmod(dataDir, 0o700);
    const server = await start();
    await server.close();
  }, 60_000);

  it("main.ts prints the refusal as one line on stderr and exits 1", async () => {
    const stray = path.join(dataDir, "operator-notes.txt");
    await writeFile(stray, "x", { mode: 0o644 });
    await chmod(stray, 0o644);
    const child = spawn(TSX, ["src/main.ts"], {
      cwd: SERVER_DIR,
      env: { PATH: process.env.PATH, ...env, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^tern-server: the data directory .* is open to other users .*operator-notes\.txt mode 0644\); fix it with: chmod -R go-rwx /,
    );
    await rm(stray);
  }, 60_000);
});

describe.runIf(testDatabaseKind() === "pglite")("an embedded database opened by another program first", () => {
  it("is private as well, so a server starts on it (the bench seeds a database with openDatabase, then starts the server)", async () => {
    const seeded = path.join(parent, "seeded");
    const handle = await openDatabase({ kind: "pglite", dataDir: path.join(seeded, "pgdata") });
    await handle.close();
    expect((await findLoosePaths(seeded)).loose).toEqual([]);
    const server = await startServer(loadConfig({ ...env, TERN_DATA_DIR: seeded }), silent);
    await server.close();
  }, 120_000);
});

describe.runIf(testDatabaseKind() === "postgres")("a data directory the server does not need", () => {
  it("is left alone when the key comes from TERN_SECRET_KEY and the database is PostgreSQL", async () => {
    const unused = path.join(parent, "unused");
    await mkdir(unused, { mode: 0o755 });
    await chmod(unused, 0o755);
    const server = await startServer(
      loadConfig({ ...env, TERN_DATA_DIR: unused, TERN_SECRET_KEY: randomBytes(32).toString("base64") }),
      silent,
    );
    await server.close();
  });
});
