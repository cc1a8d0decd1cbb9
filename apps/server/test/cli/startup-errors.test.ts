/**
 * Fatal start-up errors of `tern-server serve`, each from a spawned process:
 * exit code 1 and exactly one line on stderr naming the problem and the fix,
 * no stack trace unless --debug. Also --version, --help and usage errors.
 */

import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { freePort, freshServerPlace, lines, runTernServer, type ServerPlace } from "../support/cli.ts";

function expectOneLine(stderr: string, pattern: RegExp) {
  const out = lines(stderr);
  expect(out).toHaveLength(1);
  expect(out[0]).toMatch(/^tern-server: /);
  expect(out[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe("tern-server start-up errors", { timeout: 300_000 }, () => {
  let place: ServerPlace;
  beforeAll(async () => {
    place = await freshServerPlace();
  });
  afterAll(async () => {
    await place.cleanup();
  });

  it("a port in use: one line with the fix, exit 1", async () => {
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const run = await runTernServer(["serve", "--port", String(port)], { env: { ...place.env, TERN_SECRET_KEY: "" } });
      expect(run.code).toBe(1);
      expectOneLine(run.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*set PORT to a free port`));
    } finally {
      blocker.close();
    }
  });

  it("a database that cannot be reached: one line with the fix, exit 1", async () => {
    const closed = await freePort();
    const run = await runTernServer(["serve", "--port", "0"], {
      env: { TERN_DATA_DIR: place.dataDir, DATABASE_URL: `postgres://tern:secret@127.0.0.1:${closed}/tern` },
    });
    expect(run.code).toBe(1);
    expectOneLine(
      run.stderr,
      new RegExp(`cannot reach the PostgreSQL database at 127\\.0\\.0\\.1:${closed}/tern \\(ECONNREFUSED\\); check DATABASE_URL`),
    );
    expect(run.stderr).not.toContain("secret");
  });

  it("a bad setting: one line naming every bad variable, exit 1", async () => {
    const run = await runTernServer(["serve"], { env: { PORT: "eighty", TERN_LOG_LEVEL: "loud", TERN_DATA_DIR: place.dataDir } });
    expect(run.code).toBe(1);
    expectOneLine(run.stderr, /invalid configuration: PORT: .*; TERN_LOG_LEVEL: .*; fix these variables/);
    // The same from a --settings file (KEY=value, as systemd's EnvironmentFile); the environment wins over it.
    const file = `${place.dataDir}-server.env`;
    await writeFile(file, `TERN_DATA_DIR=${place.dataDir}\nTERN_DB_POOL_SIZE=lots\nPORT=eighty\n`);
    const fromFile = await runTernServer(["--settings", file, "serve"], { env: { PORT: "0" } });
    expect(fromFile.code).toBe(1);
    expectOneLine(
      fromFile.stderr,
      new RegExp(`invalid configuration: TERN_DB_POOL_SIZE: [^;]*; fix this variable in the environment or ${file}`),
    );
  });

  it("a data directory locked by another live process: one line with the fix, exit 1", async () => {
    // Owner-only, as a server makes them (a looser data directory is refused first, with its own line).
    await mkdir(place.dataDir, { recursive: true, mode: 0o700 });
    // The test runner itself is a live process that is not the spawned server.
    await writeFile(`${place.dataDir}/server.pid`, `${process.pid}\n`, { mode: 0o600 });
    try {
      const run = await runTernServer(["serve", "--port", "0"], { env: { TERN_DATA_DIR: place.dataDir } });
      expect(run.code).toBe(1);
      expectOneLine(
        run.stderr,
        new RegExp(`another Tern server \\(pid ${process.pid}\\) is using the embedded database.*stop that server first`),
      );
    } finally {
      await writeFile(`${place.dataDir}/server.pid`, "", { mode: 0o600 });
    }
  });

  it("a damaged server key file: one line with the fix, exit 1", async () => {
    const dir = `${place.dataDir}-damaged-key`;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(`${dir}/secret.key`, "not a key\n", { mode: 0o600 });
    const run = await runTernServer(["serve", "--port", "0"], { env: { TERN_DATA_DIR: dir } });
    expect(run.code).toBe(1);
    expectOneLine(run.stderr, /the server key file is damaged .*secret\.key.*; put back secret\.key from a backup/);
  });

  it("--debug adds the stack trace", async () => {
    const closed = await freePort();
    const run = await runTernServer(["--debug", "serve"], {
      env: { TERN_DATA_DIR: place.dataDir, DATABASE_URL: `postgres://tern@127.0.0.1:${closed}/tern` },
    });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)[0]).toMatch(/^tern-server: cannot reach the PostgreSQL database/);
    expect(run.stderr).toMatch(/\n\s+at /);
  });

  it("--version, --help and usage errors", async () => {
    const version = await runTernServer(["--version"]);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const help = await runTernServer(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["serve", "migrate", "admin", "backup", "restore", "doctor"]) expect(help.stdout).toContain(command);
    const unknown = await runTernServer(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});
