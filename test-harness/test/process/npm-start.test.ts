/**
 * The README's start command as a user runs it: `npm start` at the repository root (after `npm ci`, which CI
 * runs before the tests). SIGTERM (then SIGINT) to the pid of that npm process must bring the whole tree down (npm, the build
 * wrapper, the server) within 10 s, the server stopping gracefully; the next start must find the database as it
 * was left (it opens it, the administrator logs in, the organization made before the stop is there).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandLine, descendants, stillRunning } from "./proc-tree.ts";

const REPO = join(import.meta.dirname, "..", "..", "..");
const EMAIL = "owner@example.com";
const PASSWORD = "npm start test password";

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start` in the repository root, in its own process group (so a failed test can still clean up). */
async function npmStart(dataDir: string): Promise<Started> {
  const child = spawn("npm", ["start"], {
    cwd: REPO,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TERN_DATA_DIR: dataDir,
      PORT: "0",
      TERN_ADMIN_EMAIL: EMAIL,
      TERN_ADMIN_PASSWORD: PASSWORD,
      TERN_PASSWORD_HASH_COST: "10",
    },
  });
  let output = "";
  child.stdout!.on("data", (d) => {
    output += d;
  });
  child.stderr!.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen within 180 s:\n${output}`)), 180_000);
    const check = () => {
      const line = output.split("\n").find((l) => l.includes('"docs"'));
      if (!line) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    };
    child.stdout!.on("data", check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before listening:\n${output}`));
    });
  });
  return { child, url, output: () => output, exited };
}

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function login(url: string): Promise<string> {
  const res = await post(`${url}/api/users/login`, { username: EMAIL, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body.accessToken as string;
}

/** A signal to npm's pid only; returns how long until no process of its tree ran any more (throws after 10 s). */
async function terminate(started: Started, signal: "SIGTERM" | "SIGINT"): Promise<number> {
  const pid = started.child.pid!;
  const tree = [pid, ...descendants(pid)];
  // npm, then node running the server: the tree really holds the server, or this test proves nothing.
  expect(tree.map(commandLine).some((c) => c.includes("scripts/start.mjs"))).toBe(true);
  const t0 = Date.now();
  process.kill(pid, signal);
  for (;;) {
    const left = stillRunning([...tree, ...descendants(pid)]);
    if (left.length === 0) return Date.now() - t0;
    if (Date.now() - t0 > 10_000)
      throw new Error(
        `still running 10 s after ${signal} to npm (${pid}):\n${left.map((p) => `${p} ${commandLine(p)}`).join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("npm start (the README's command)", () => {
  let dataDir: string;
  const started: Started[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tern-npm-start-"));
  });
  afterAll(async () => {
    for (const s of started) {
      try {
        process.kill(-s.child.pid!, "SIGKILL");
      } catch {
        // the group is gone: the normal case
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it("stops the whole process tree on SIGTERM (and SIGINT) to npm, and the next start finds the data", async () => {
    const first = await npmStart(dataDir);
    started.push(first);
    const token = await login(first.url);
    const org = await post(`${first.url}/api/organizations`, { name: "Survives restarts" }, token);
    expect(org.status).toBe(201);

    const ms = await terminate(first, "SIGTERM");
    expect(ms).toBeLessThan(10_000);
    await first.exited;
    // The server itself stopped through its graceful path (gateway, requests, database), not by being killed.
    expect(first.output()).toContain('"msg":"stopped"');

    const second = await npmStart(dataDir);
    started.push(second);
    // No migration ran again and nothing was repaired: the database is the one the first server closed.
    expect(second.output()).not.toContain('"msg":"migration"');
    const again = await login(second.url);
    const res = await fetch(`${second.url}/api/organizations/${org.body.id}`, { headers: { authorization: `Bearer ${again}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe("Survives restarts");
    // Ctrl-C in a terminal reaches npm as SIGINT: the same clean stop.
    expect(await terminate(second, "SIGINT")).toBeLessThan(10_000);
    await second.exited;
    expect(second.output()).toContain('"msg":"stopped"');
  }, 420_000);
});
