/**
 * `tern-server doctor` as a spawned process: a new place (warnings only), a
 * stopped and a running server (all ok), then broken things (key file mode,
 * a foreign process on the port, an unreachable SMTP server, a wrong key, a bad
 * setting), each a `fail` with its fix and exit code 1.
 */
import { chmod, mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, freshServerPlace, randomKey, runTernServer, type ServerPlace, startServe } from "../support/cli.ts";
import { testDatabaseKind } from "../support/test-database.ts";

type Check = { name: string; verdict: "ok" | "warn" | "fail"; detail: string; fix?: string };

describe("tern-server doctor", { timeout: 600_000 }, () => {
  let place: ServerPlace;
  let env: Record<string, string>;
  const doctor = async (extra: Record<string, string> = {}) => {
    const run = await runTernServer(["doctor", "--json"], { env: { ...env, ...extra } });
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: Check[] };
    const verdicts = Object.fromEntries(report.checks.map((c) => [c.name, c.verdict]));
    return { run, report, verdicts, check: (name: string) => report.checks.find((c) => c.name === name) };
  };
  beforeAll(async () => {
    place = await freshServerPlace();
    // PostgreSQL instances take the key from the environment (a key file there is a warning).
    env = {
      ...place.env,
      PORT: String(await freePort()),
      ...(testDatabaseKind() === "postgres" ? { TERN_SECRET_KEY: randomKey() } : {}),
    };
  });
  afterAll(async () => {
    await place.cleanup();
  });

  it("a new place: warnings only, exit 0", async () => {
    const d = await doctor();
    expect(d.run.code).toBe(0);
    expect(d.verdicts).toMatchObject({ configuration: "ok", port: "ok" });
    if (testDatabaseKind() === "pglite")
      expect(d.verdicts).toMatchObject({ "data directory": "warn", "server key": "warn", database: "warn" });
    // PostgreSQL with the key in the environment needs no data directory.
    else expect(d.verdicts).toMatchObject({ "data directory": "ok", "server key": "ok", database: "ok", migrations: "warn" });
    const human = await runTernServer(["doctor"], { env });
    expect(human.stdout).toMatch(/^ok {4}configuration /m);
    expect(human.stdout).toMatch(/^warn {2}(data directory|migrations) .*\n {22}fix: /m);
    expect(human.stdout).toMatch(/no check failed, \d warning\(s\)/);
  });

  it("a server that ran once, stopped and running: every check ok", async () => {
    // As the package installs it (install -d -m 700): the directory holds the key and the database.
    await mkdir(place.dataDir, { recursive: true, mode: 0o700 });
    const serve = startServe(["serve"], { env });
    try {
      await serve.listening;
      const running = await doctor();
      expect(running.run.code).toBe(0);
      expect(running.check("port")?.detail).toMatch(/in use by a running Tern server \(version /);
      if (testDatabaseKind() === "pglite")
        expect(running.check("database")?.detail).toMatch(/in use by the running server \(pid \d+\)/);
    } finally {
      expect(await serve.stop()).toBe(0);
    }

    const stopped = await doctor();
    expect(stopped.run.code).toBe(0);
    expect(stopped.report.checks.filter((c) => c.verdict !== "ok")).toEqual([]);
    expect(Object.keys(stopped.verdicts)).toEqual([
      "configuration",
      "data directory",
      "server key",
      "database",
      "migrations",
      "key opens data",
      "clock",
      "port",
    ]);
  });

  it("broken things fail with their fix, exit 1", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(Number(env.PORT), "127.0.0.1", resolve));
    const closedSmtp = await freePort();
    try {
      await chmod(place.dataDir, 0o755);
      if (testDatabaseKind() === "pglite") await chmod(path.join(place.dataDir, "secret.key"), 0o644);
      const d = await doctor({ TERN_SMTP_URL: `smtp://127.0.0.1:${closedSmtp}` });
      expect(d.run.code).toBe(1);
      expect(d.report.ok).toBe(false);
      expect(d.check("port")).toMatchObject({ verdict: "fail", fix: expect.stringContaining("set PORT to a free port") });
      expect(d.check("data directory")).toMatchObject({
        verdict: "warn",
        fix: `chmod 700 ${place.dataDir}: it holds the server key and the database`,
      });
      expect(d.check("smtp")).toMatchObject({ verdict: "fail", fix: expect.stringContaining("TERN_SMTP_URL") });
      if (testDatabaseKind() === "pglite")
        expect(d.check("server key")).toMatchObject({ verdict: "fail", fix: expect.stringMatching(/^chmod 600 /) });
    } finally {
      blocker.close();
      await chmod(place.dataDir, 0o700);
      if (testDatabaseKind() === "pglite") await chmod(path.join(place.dataDir, "secret.key"), 0o600);
    }
    const bad = await runTernServer(["doctor"], { env: { ...env, PORT: "eighty" } });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^fail {2}configuration {3}invalid configuration: PORT: /m);
  });
});
