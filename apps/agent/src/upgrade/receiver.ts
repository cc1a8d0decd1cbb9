/**
 * The agent's side of `upgrade-begin`, `upgrade-chunk` and `upgrade-install` (docs/upgrades.md):
 * - begin: refused without a trusted key (secure default), for a signature none of the agent's own keys made,
 *   or for the version already running; then the package is received into <state>/upgrade/incoming.tar.gz;
 * - chunk: bytes in order, never beyond the announced size;
 * - install: checksum and signature checked again on the file, unpacked with tar into
 *   <state>/versions/<version> (its manifest must name that version and a bundle must be there), the marker
 *   written (pending, deadline, tunnels up now), `current` pointed at it, and after the answer went out the
 *   guard (bin/upgrade-launch.mjs, the launcher's code, not the new version's) is started and the agent stops.
 *   The new version commits once healthy (daemon/agent.ts); otherwise the guard rolls back.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, open, readFile, readlink, rename, rm, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { AgentPackageManifest, type UpgradeBeginParams } from "@tern/protocol";
import type { LaunchInfo } from "../commands/deps.ts";
import { AgentError } from "../errors.ts";
import type { Runner } from "../runner.ts";
import { markerPath, upgradeDir, versionsPath, writeMarker } from "./marker.ts";
import { UNPACKING_SUFFIX } from "./prune.ts";
import { signedByTrustedKey } from "./trust.ts";
import { withVersionsLock } from "./versions-lock.ts";

export interface UpgradeEnv {
  stateDir: string;
  /** The pid lock `run` holds. */
  lockFile: string;
  keys: readonly string[];
  runningVersion: string;
  runner: Runner;
  /** How this process started; absent: it cannot restart itself, upgrades are refused. */
  launch: LaunchInfo | undefined;
  /** What must be true again after the restart. */
  before(): { tunnelsUp: string[]; hadConfig: boolean };
  /** Stops this agent (after the guard started). */
  stop(): void;
  log: { info(msg: string, data?: Record<string, unknown>): void; warn(msg: string, data?: Record<string, unknown>): void };
}

interface Incoming extends UpgradeBeginParams {
  received: number;
}

/** After the install answer, before the agent stops: time for the response to leave. */
const RESTART_DELAY_MS = 300;

export class UpgradeReceiver {
  private incoming: Incoming | null = null;

  constructor(private readonly env: UpgradeEnv) {}

  private get file(): string {
    return join(upgradeDir(this.env.stateDir), "incoming.tar.gz");
  }

  async begin(p: UpgradeBeginParams): Promise<{ ok: true; received: number }> {
    if (this.env.keys.length === 0)
      throw new AgentError("INVALID_REQUEST", "this agent trusts no upgrade key (upgrade-keys): upgrades are refused");
    if (!this.env.launch)
      throw new AgentError("INVALID_REQUEST", "this agent was not started through its launcher: it cannot upgrade");
    if (!signedByTrustedKey(this.env.keys, p.version, p.sha256, p.signature))
      throw new AgentError("INVALID_REQUEST", "the package is not signed by a key this agent trusts");
    if (p.version === this.env.runningVersion) throw new AgentError("INVALID_REQUEST", `version ${p.version} is running already`);
    await mkdir(upgradeDir(this.env.stateDir), { recursive: true, mode: 0o700 });
    await rm(this.file, { force: true });
    await (await open(this.file, "w", 0o600)).close();
    this.incoming = { ...p, received: 0 };
    this.env.log.info("receiving an agent upgrade", { version: p.version, size: p.size });
    return { ok: true, received: 0 };
  }

  private current(upgradeId: string): Incoming {
    const inc = this.incoming;
    if (!inc || inc.upgradeId !== upgradeId)
      throw new AgentError("INVALID_REQUEST", "no such upgrade in progress (upgrade-begin first)");
    return inc;
  }

  async chunk(p: { upgradeId: string; offset: number; data: string }): Promise<{ ok: true; received: number }> {
    const inc = this.current(p.upgradeId);
    if (p.offset !== inc.received) throw new AgentError("INVALID_REQUEST", `expected offset ${inc.received}, got ${p.offset}`);
    const bytes = Buffer.from(p.data, "base64");
    if (inc.received + bytes.length > inc.size) throw new AgentError("INVALID_REQUEST", "more bytes than the announced size");
    const handle = await open(this.file, "a");
    try {
      await handle.write(bytes);
    } finally {
      await handle.close();
    }
    inc.received += bytes.length;
    return { ok: true, received: inc.received };
  }

  /** Under the versions lock: a prune (prune.ts) never sees a version between its unpack and its marker. */
  install(p: { upgradeId: string; healthTimeoutSec: number }): Promise<{ ok: true; received: number }> {
    return withVersionsLock(() => this.installLocked(p));
  }

  private async installLocked(p: { upgradeId: string; healthTimeoutSec: number }): Promise<{ ok: true; received: number }> {
    const inc = this.current(p.upgradeId);
    const launch = this.env.launch;
    if (!launch) throw new AgentError("INVALID_REQUEST", "this agent cannot upgrade");
    if (inc.received !== inc.size) throw new AgentError("INVALID_REQUEST", `received ${inc.received} of ${inc.size} bytes`);
    const bytes = await readFile(this.file);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (sha256 !== inc.sha256) throw new AgentError("INVALID_REQUEST", "the package's SHA-256 does not match");
    if (!signedByTrustedKey(this.env.keys, inc.version, sha256, inc.signature))
      throw new AgentError("INVALID_REQUEST", "the package is not signed by a key this agent trusts");
    const versions = versionsPath(this.env.stateDir);
    const target = join(versions, inc.version);
    const tmp = `${target}${UNPACKING_SUFFIX}`;
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true, mode: 0o755 });
    await this.env.runner.run(["tar", "-xzf", this.file, "-C", tmp, "--no-same-owner"], { timeoutMs: 120_000 });
    const manifest = AgentPackageManifest.safeParse(
      JSON.parse(await readFile(join(tmp, "manifest.json"), "utf8").catch(() => "null")),
    );
    if (!manifest.success || manifest.data.version !== inc.version) {
      await rm(tmp, { recursive: true, force: true });
      throw new AgentError("INVALID_REQUEST", `the package's manifest does not name version ${inc.version}`);
    }
    if (!(await stat(join(tmp, "dist", "cli.js")).catch(() => null))) {
      await rm(tmp, { recursive: true, force: true });
      throw new AgentError("INVALID_REQUEST", "the package holds no agent bundle (dist/cli.js)");
    }
    await rm(target, { recursive: true, force: true });
    await rename(tmp, target);
    const previous = await readlink(join(versions, "current")).catch(() => null);
    const before = this.env.before();
    await writeMarker(this.env.stateDir, {
      upgradeId: inc.upgradeId,
      from: this.env.runningVersion,
      to: inc.version,
      state: "pending",
      previous,
      deadline: Date.now() + p.healthTimeoutSec * 1000,
      healthTimeoutSec: p.healthTimeoutSec,
      tunnelsUp: before.tunnelsUp,
      hadConfig: before.hadConfig,
      oldPid: process.pid,
      lockFile: this.env.lockFile,
      relaunch: launch.serviceManaged ? null : [...launch.node, launch.launcher, ...launch.args],
      cwd: launch.cwd,
    });
    const link = join(versions, "current");
    await rm(`${link}.next`, { force: true });
    await symlink(inc.version, `${link}.next`);
    await rename(`${link}.next`, link);
    await rm(this.file, { force: true });
    this.incoming = null;
    this.env.log.info("agent upgrade installed: restarting into it under the guard", {
      version: inc.version,
      healthTimeoutSec: p.healthTimeoutSec,
      marker: markerPath(this.env.stateDir),
    });
    setTimeout(() => this.restart(launch), RESTART_DELAY_MS);
    return { ok: true, received: inc.received };
  }

  private restart(launch: LaunchInfo): void {
    const [node, ...flags] = launch.node;
    const guard = spawn(node ?? process.execPath, [...flags, launch.launcher, "upgrade-guard", this.env.stateDir], {
      cwd: launch.cwd,
      detached: true,
      stdio: "inherit",
    });
    guard.unref();
    this.env.stop();
  }
}
