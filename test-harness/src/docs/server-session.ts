/**
 * The session a `<!-- doc-test: session server -->` document runs in: a fresh
 * management server on its own embedded database (a new data directory), on a
 * free loopback port, with a mail catcher as its SMTP server. The reader's
 * variables are set once, as the docs tell a reader to: B and TERN_URL (the
 * base URLs), TERN_DATA_DIR (where the initial admin password is written),
 * MAILDIR (where the catcher puts each e-mail), XDG_CONFIG_HOME (where `tern`
 * keeps its login: not the real user's), and `tern` on the PATH (as
 * `npm link -w @tern/cli` would put it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freeLoopbackPort, waitForHttp } from "../lab/control/server.ts";
import { startMailCatcher } from "./mail-catcher.ts";

export const REPO_ROOT = join(import.meta.dirname, "..", "..", "..");

export interface ServerSession {
  env: NodeJS.ProcessEnv;
  log: () => string;
  stop: () => Promise<void>;
}

export async function startServerSession(): Promise<ServerSession> {
  const root = await mkdtemp(join(tmpdir(), "tern-doc-session-"));
  const dataDir = join(root, "tern-data");
  const mailDir = join(root, "mail");
  const mail = await startMailCatcher(mailDir);
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  let log = "";
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "apps/server/src/main.ts")], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: "127.0.0.1",
      TERN_DATA_DIR: dataDir,
      TERN_SMTP_URL: mail.url,
      TERN_PUBLIC_URL: url,
      TERN_LOG_LEVEL: "warn",
      // Cost 17 takes 128 MiB and most of a second per hash on two shared cores; the walk-throughs log in often.
      TERN_PASSWORD_HASH_COST: "12",
    },
  });
  child.stdout!.on("data", (d) => {
    log += d;
  });
  child.stderr!.on("data", (d) => {
    log += d;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let alive = true;
  void exited.then(() => {
    alive = false;
  });
  const stop = async () => {
    if (alive) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (alive) child.kill("SIGKILL");
    }
    await mail.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/api/health`, 120_000, async () => alive);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${log}`);
  }
  return {
    env: {
      PATH: `${join(REPO_ROOT, "apps/cli/bin")}:${process.env.PATH}`,
      HOME: process.env.HOME,
      LANG: "C.UTF-8",
      B: `${url}/api`,
      TERN_URL: url,
      TERN_DATA_DIR: dataDir,
      MAILDIR: mailDir,
      XDG_CONFIG_HOME: join(root, "config"),
    },
    log: () => log,
    stop,
  };
}
