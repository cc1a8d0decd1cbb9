/**
 * The agent's side of an upgrade (upgrade/receiver.ts) with real files and the real tar: refusals (no trusted
 * key, a key it does not trust, a wrong checksum, a manifest of another version, bytes out of order), and an
 * install that unpacks beside the running version, points `current` at it, writes the pending marker (tunnels up
 * before, config applied) and starts the guard through the launcher before stopping the agent.
 */
import { mkdtemp, readFile, readlink, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentPackageSigningText } from "@tern/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { AgentError } from "../../src/errors.ts";
import { ExecRunner } from "../../src/runner.ts";
import { readMarker } from "../../src/upgrade/marker.ts";
import { UpgradeReceiver } from "../../src/upgrade/receiver.ts";
import { parseTrustedKeys } from "../../src/upgrade/trust.ts";
import { fakePackage, generateSigningKeys, removeTestDirs, type SignedPackage, signingText, testDirs } from "./packages.ts";

const operator = generateSigningKeys();
const stranger = generateSigningKeys();
const UPGRADE_ID = "7d8e2f0a-6b1c-4b8e-9f3a-1c2d3e4f5a6b";

async function receiver(keys: string[], opts: { launcher?: string } = {}) {
  const stateDir = await mkdtemp(join(tmpdir(), "tern-upgrade-state-"));
  testDirs.push(stateDir);
  const stopped: string[] = [];
  const r = new UpgradeReceiver({
    stateDir,
    lockFile: join(stateDir, "run", "agent.lock"),
    keys,
    runningVersion: "1.0.0",
    runner: new ExecRunner(),
    launch: {
      node: [process.execPath],
      launcher: opts.launcher ?? join(stateDir, "no-launcher.mjs"),
      args: ["run", "--state-dir", stateDir],
      cwd: stateDir,
      serviceManaged: false,
    },
    before: () => ({ tunnelsUp: ["t-1", "t-2"], hadConfig: true }),
    stop: () => stopped.push("stop"),
    log: { info: () => {}, warn: () => {} },
  });
  return { r, stateDir, stopped };
}

async function send(r: UpgradeReceiver, pkg: SignedPackage, bytes?: Buffer) {
  const content = bytes ?? (await readFile(pkg.file));
  await r.begin({
    upgradeId: UPGRADE_ID,
    version: pkg.version,
    size: content.length,
    sha256: pkg.sha256,
    signature: pkg.signature,
  });
  for (let off = 0; off < content.length; off += 100_000)
    await r.chunk({ upgradeId: UPGRADE_ID, offset: off, data: content.subarray(off, off + 100_000).toString("base64") });
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "resolved";
  } catch (err) {
    return err instanceof AgentError ? `${err.code}: ${err.message}` : String(err);
  }
};

afterAll(removeTestDirs);

describe("upgrade receiver", () => {
  it("an agent without trusted keys refuses every upgrade (secure default)", async () => {
    const pkg = await fakePackage("2.0.0", "process.exit(0);\n", operator.privateKeyPem);
    const { r } = await receiver([]);
    expect(await codeOf(send(r, pkg))).toMatch(/^INVALID_REQUEST: .*trusts no upgrade key/);
  });

  it("refuses a package signed by a key it does not trust, even one the server would know", async () => {
    const pkg = await fakePackage("2.0.0", "process.exit(0);\n", stranger.privateKeyPem);
    const { r } = await receiver([operator.publicKey]);
    expect(await codeOf(send(r, pkg))).toMatch(/not signed by a key this agent trusts/);
  });

  it("refuses at install bytes that do not match the signed checksum; nothing is installed", async () => {
    const pkg = await fakePackage("2.0.0", "process.exit(0);\n", operator.privateKeyPem);
    const { r, stateDir } = await receiver([operator.publicKey]);
    const tampered = await readFile(pkg.file);
    tampered[tampered.length - 5] = (tampered[tampered.length - 5]! + 1) % 256;
    await send(r, pkg, tampered);
    expect(await codeOf(r.install({ upgradeId: UPGRADE_ID, healthTimeoutSec: 60 }))).toMatch(/SHA-256 does not match/);
    expect(await stat(join(stateDir, "versions", "2.0.0")).catch(() => null)).toBeNull();
    expect(await readMarker(stateDir)).toBeNull();
  });

  it("refuses a manifest of another version than the signed one", async () => {
    // Signed as 3.0.0 but built (manifest) as 2.0.0.
    const built = await fakePackage("2.0.0", "process.exit(0);\n", operator.privateKeyPem);
    const { signPackageBytes } = await import("./packages.ts");
    const resigned = { ...built, ...signPackageBytes(await readFile(built.file), "3.0.0", operator.privateKeyPem) };
    const { r, stateDir } = await receiver([operator.publicKey]);
    await send(r, resigned);
    expect(await codeOf(r.install({ upgradeId: UPGRADE_ID, healthTimeoutSec: 60 }))).toMatch(
      /manifest does not name version 3.0.0/,
    );
    expect(await readlink(join(stateDir, "versions", "current")).catch(() => null)).toBeNull();
  });

  it("refuses chunks out of order and beyond the announced size", async () => {
    const pkg = await fakePackage("2.0.0", "process.exit(0);\n", operator.privateKeyPem);
    const { r } = await receiver([operator.publicKey]);
    const content = await readFile(pkg.file);
    await r.begin({
      upgradeId: UPGRADE_ID,
      version: "2.0.0",
      size: content.length,
      sha256: pkg.sha256,
      signature: pkg.signature,
    });
    expect(await codeOf(r.chunk({ upgradeId: UPGRADE_ID, offset: 10, data: "AAAA" }))).toMatch(/expected offset 0/);
    const tooMuch = Buffer.concat([content, Buffer.from("x")]).toString("base64");
    expect(await codeOf(r.chunk({ upgradeId: UPGRADE_ID, offset: 0, data: tooMuch }))).toMatch(
      /more bytes than the announced size/,
    );
  });

  it("installs side by side, points current at it, writes the pending marker and starts the guard through the launcher", async () => {
    const pkg = await fakePackage("2.0.0", "process.exit(0);\n", operator.privateKeyPem);
    // A launcher that records how it was called (the real one is tested in guard.test.ts).
    const probeDir = await mkdtemp(join(tmpdir(), "tern-upgrade-launcher-"));
    testDirs.push(probeDir);
    const launcher = join(probeDir, "launcher.mjs");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      launcher,
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(join(probeDir, "argv.json"))}, JSON.stringify(process.argv.slice(2)));\n`,
    );
    const { r, stateDir, stopped } = await receiver([operator.publicKey], { launcher });
    await send(r, pkg);
    const before = Date.now();
    expect(await r.install({ upgradeId: UPGRADE_ID, healthTimeoutSec: 60 })).toEqual({
      ok: true,
      received: (await readFile(pkg.file)).length,
    });
    expect(await readlink(join(stateDir, "versions", "current"))).toBe("2.0.0");
    expect(await readFile(join(stateDir, "versions", "2.0.0", "dist", "cli.js"), "utf8")).toBe("process.exit(0);\n");
    const marker = await readMarker(stateDir);
    expect(marker).toMatchObject({
      upgradeId: UPGRADE_ID,
      from: "1.0.0",
      to: "2.0.0",
      state: "pending",
      previous: null,
      tunnelsUp: ["t-1", "t-2"],
      hadConfig: true,
      oldPid: process.pid,
      relaunch: [process.execPath, launcher, "run", "--state-dir", stateDir],
    });
    expect(marker!.deadline).toBeGreaterThanOrEqual(before + 60_000);
    // After the answer: the guard is started through the launcher, then the agent stops.
    const argvFile = join(probeDir, "argv.json");
    for (let i = 0; i < 100 && !(await stat(argvFile).catch(() => null)); i++) await new Promise((res) => setTimeout(res, 50));
    expect(JSON.parse(await readFile(argvFile, "utf8"))).toEqual(["upgrade-guard", stateDir]);
    expect(stopped).toEqual(["stop"]);
  });

  it("the operator's tool signs the protocol's text (packaging/agent-package.mjs cannot import the protocol)", () => {
    const sha = "ab".repeat(32);
    expect(signingText("2.0.0", sha)).toBe(agentPackageSigningText("2.0.0", sha));
  });

  it("parses the upgrade-keys setting and refuses a malformed key", () => {
    expect(parseTrustedKeys(undefined)).toEqual([]);
    expect(parseTrustedKeys(` ${operator.publicKey}, ${stranger.publicKey} `)).toEqual([operator.publicKey, stranger.publicKey]);
    expect(() => parseTrustedKeys("not-a-key")).toThrow(/not an Ed25519 public key/);
  });
});
