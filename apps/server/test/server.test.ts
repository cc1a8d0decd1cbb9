/**
 * The whole server as `npm start` runs it: startServer on a data directory or a
 * PostgreSQL database, restart with persisted data, graceful shutdown, and
 * main.ts as a child process (login, create an organization and a key, SIGTERM).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { createPostgresDatabase, testDatabaseKind } from "./support/test-database.ts";

const silent = pino({ level: "silent" });
const SERVER_DIR = fileURLToPath(new URL("..", import.meta.url));
// Node itself with tsx's loader, not the tsx command: that one relays a SIGTERM to its child and, when the child's
// acknowledgement takes more than 30 ms (a loaded machine), kills it and exits 143 instead of the server's own 0.
const TSX_LOADER = ["--import", "tsx"];

interface Target {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A fresh place for the server's data: a temp data dir (PGlite) or a new PostgreSQL database. */
async function freshTarget(): Promise<Target> {
  const dir = await mkdtemp(path.join(tmpdir(), "tern-server-"));
  if (testDatabaseKind() === "pglite") {
    return { env: { TERN_DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const db = await createPostgresDatabase();
  return {
    env: { TERN_DATA_DIR: dir, DATABASE_URL: db.url, TERN_SECRET_KEY: randomBytes(32).toString("base64") },
    cleanup: async () => {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("startServer", () => {
  let target: Target;
  let server: RunningServer;
  beforeAll(async () => {
    target = await freshTarget();
  });
  afterAll(async () => {
    await server?.close();
    await target.cleanup();
  });

  it("migrates, creates the first admin with a generated password, listens", async () => {
    const config = loadConfig({ ...target.env, PORT: "0", TERN_PASSWORD_HASH_COST: "10" });
    server = await startServer(config, silent);
    expect(server.bootstrap).toMatchObject({ created: true, email: "admin@localhost" });
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(200);
    if (testDatabaseKind() === "pglite") {
      expect((await stat(path.join(target.env.TERN_DATA_DIR!, "secret.key"))).mode & 0o777).toBe(0o600);
      // One server per embedded database.
      await expect(startServer({ ...config, PORT: 0 }, silent)).rejects.toThrow(/another Tern server/);
    }
  });

  it("lets in-flight requests finish on close, then refuses connections", async () => {
    const generated = server.bootstrap.created ? server.bootstrap.generatedPassword! : "";
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      started = resolve;
    });
    const limiter = server.deps.loginLimits.ip;
    const hit = limiter.hit.bind(limiter);
    limiter.hit = (key, now) => {
      hit(key, now);
      started();
    };
    const login = post(`${server.url}/api/users/login`, { username: "admin@localhost", password: generated });
    await inFlight;
    const closing = server.close();
    const res = await login;
    expect(res.status).toBe(200);
    await closing;
    await expect(fetch(`${server.url}/api/health`)).rejects.toThrow();
  });

  it("keeps its data and key across a restart", async () => {
    const config = loadConfig({ ...target.env, PORT: "0", TERN_PASSWORD_HASH_COST: "10" });
    const first = server.bootstrap.created ? server.bootstrap.generatedPassword! : "";
    server = await startServer(config, silent);
    expect(server.bootstrap.created).toBe(false);
    const login = await post(`${server.url}/api/users/login`, { username: "admin@localhost", password: first });
    expect(login.status).toBe(200);
  });
});

/** A loopback port nobody listens on (the kernel's pick, released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe("startServer's beforeListen (where `serve` writes the generated password's file)", () => {
  it("runs once the first admin exists and before the port accepts a connection", async () => {
    const target = await freshTarget();
    const port = await freePort();
    const config = loadConfig({ ...target.env, PORT: String(port), HOST: "127.0.0.1", TERN_PASSWORD_HASH_COST: "10" });
    const seen: { created: boolean; url: string; refused: boolean }[] = [];
    const started = await startServer(config, silent, {
      beforeListen: async (bootstrap, url) => {
        const refused = await fetch(`${url}/api/health`).then(
          () => false,
          () => true,
        );
        seen.push({ created: bootstrap.created, url, refused });
      },
    });
    try {
      expect(seen).toEqual([{ created: true, url: `http://127.0.0.1:${port}`, refused: true }]);
      expect((await fetch(`${started.url}/api/health`)).status).toBe(200);
    } finally {
      await started.close();
      await target.cleanup();
    }
  });
});

describe.runIf(testDatabaseKind() === "postgres")("several instances on one PostgreSQL", () => {
  it("start together, bootstrap once, and accept each other's tokens", async () => {
    const target = await freshTarget();
    const servers: RunningServer[] = [];
    try {
      const config = loadConfig({
        ...target.env,
        PORT: "0",
        TERN_PASSWORD_HASH_COST: "10",
        TERN_ADMIN_EMAIL: "ops@example.com",
        TERN_ADMIN_PASSWORD: "shared admin password",
      });
      servers.push(...(await Promise.all([startServer(config, silent), startServer(config, silent)])));
      expect(servers.map((s) => s.bootstrap.created).sort()).toEqual([false, true]);
      const [a, b] = servers as [RunningServer, RunningServer];
      const login = await post(`${a.url}/api/users/login`, { username: "ops@example.com", password: "shared admin password" });
      const orgs = await fetch(`${b.url}/api/organizations`, { headers: { authorization: `Bearer ${login.body.accessToken}` } });
      expect(orgs.status).toBe(200);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await target.cleanup();
    }
  });
});

/** Runs main.ts like `npm start` and collects its output. */
function runMain(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [...TSX_LOADER, "src/main.ts"], {
    cwd: SERVER_DIR,
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => {
    stdout += d;
  });
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = stdout.split("\n").find((l) => l.includes('"docs"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    };
    child.stdout!.on("data", check);
    exited.then((code) => reject(new Error(`main.ts exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
  // Tests that expect an early exit never await it.
  listening.catch(() => {});
  return { child, listening, exited, output: () => ({ stdout, stderr }) };
}

describe("main.ts (npm start)", () => {
  it("serves the API until SIGTERM, then exits 0", async () => {
    const target = await freshTarget();
    const main = runMain({
      ...target.env,
      PORT: "0",
      TERN_PASSWORD_HASH_COST: "10",
      TERN_ADMIN_EMAIL: "root@example.com",
      TERN_ADMIN_PASSWORD: "initial password",
    });
    try {
      const url = await main.listening;
      expect(main.output().stdout).toContain("/api/docs");
      const login = await post(`${url}/api/users/login`, { username: "root@example.com", password: "initial password" });
      expect(login.status).toBe(200);
      const org = await post(`${url}/api/organizations`, { name: "Lab" }, login.body.accessToken as string);
      expect(org.status).toBe(201);
      const key = await post(`${url}/api/accesstokens?org=${org.body.id}`, { name: "ci" }, login.body.accessToken as string);
      expect(key.status).toBe(201);
      const withKey = await fetch(`${url}/api/organizations/${org.body.id}`, {
        headers: { authorization: `Bearer ${key.body.token}` },
      });
      expect(withKey.status).toBe(200);
      expect((await fetch(`${url}/api/docs`)).status).toBe(200);

      main.child.kill("SIGTERM");
      expect(await main.exited).toBe(0);
      expect(main.output().stdout).toContain('"msg":"stopped"');
    } finally {
      main.child.kill("SIGKILL");
      await target.cleanup();
    }
  }, 60_000);

  it("refuses a bad configuration with a message naming the variable", async () => {
    const main = runMain({ PORT: "eighty", TERN_DATA_DIR: "/nonexistent" });
    expect(await main.exited).toBe(1);
    expect(main.output().stderr).toMatch(/PORT/);
  }, 30_000);
});
