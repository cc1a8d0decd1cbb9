/**
 * The running agent's side of upgrades over a real websocket (fake control server): the upgrade requests reach
 * the receiver (refused without trusted keys), a freshly upgraded agent commits once connected with the tunnels
 * it had before up again, never while one is missing, and reports the outcome in its status; an agent restored
 * by the guard reports the rollback; old versions are pruned on the commit, not before (upgrade/prune.ts).
 */
import { mkdir, readdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markerPath, readMarker, type UpgradeMarker, versionsPath, writeMarker } from "../../src/upgrade/marker.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { tempDirs } from "../support/context.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";

const UPGRADE_ID = "7d8e2f0a-6b1c-4b8e-9f3a-1c2d3e4f5a6b";

function marker(stateDir: string, over: Partial<UpgradeMarker> = {}): UpgradeMarker {
  return {
    upgradeId: UPGRADE_ID,
    from: "1.0.0",
    to: "2.0.0",
    state: "pending",
    previous: null,
    deadline: Date.now() + 60_000,
    healthTimeoutSec: 60,
    tunnelsUp: ["t-1"],
    hadConfig: false,
    oldPid: 0,
    lockFile: `${stateDir}/run/agent.lock`,
    relaunch: null,
    cwd: stateDir,
    ...over,
  };
}

describe("agent upgrades in the running agent", () => {
  let server: FakeControlServer | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    await server?.stop();
    h = null;
    server = null;
  });

  it("answers upgrade-begin through its request handler: refused without a trusted key", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server, { upgrade: { keys: [], stop: () => {} } });
    await server.waitFor("hello");
    const res = await server.request("upgrade-begin", {
      upgradeId: UPGRADE_ID,
      version: "2.0.0",
      size: 10,
      sha256: "a".repeat(64),
      signature: `${"A".repeat(86)}==`,
    });
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/trusts no upgrade key/);
  });

  it("an upgraded agent commits only once the tunnels up before are up again, then reports it", async () => {
    server = await FakeControlServer.start();
    const dirs = await tempDirs("agent-upgraded");
    await writeMarker(dirs.stateDir, marker(dirs.stateDir));
    h = await startAgent(server, { dirs, version: "2.0.0", statusIntervalMs: 100 });
    const hello = await server.waitFor("hello");
    expect(hello.agentVersion).toBe("2.0.0");
    // Connected, but tunnel t-1 is not up yet: nothing committed, nothing reported.
    await server.waitFor("status");
    await h.agent.refresh();
    expect((await readMarker(dirs.stateDir))?.state).toBe("pending");
    expect(server.messages("status").every((s) => s.upgrade === undefined)).toBe(true);
    h.tunnels.reports = [{ id: "t-1", up: true, loss: 0, rtt: 1, jitter: 0, samples: 10 }];
    const status = await h.agent.refresh();
    expect(status.upgrade).toMatchObject({ upgradeId: UPGRADE_ID, from: "1.0.0", to: "2.0.0", outcome: "committed" });
    expect(JSON.parse(await readFile(markerPath(dirs.stateDir), "utf8")).state).toBe("committed");
    await server.waitFor("status", (s) => s.upgrade?.outcome === "committed");
    await h.stop();
    h = null;
    await dirs.remove();
  });

  it("an agent restored by the guard reports the rollback with its reason", async () => {
    server = await FakeControlServer.start();
    const dirs = await tempDirs("agent-rolled-back");
    await writeMarker(dirs.stateDir, {
      ...marker(dirs.stateDir),
      state: "rolled-back",
      detail: "version 2.0.0 exited (code 3) before it was healthy",
      at: new Date().toISOString(),
    });
    h = await startAgent(server, { dirs, version: "1.0.0" });
    const status = await server.waitFor("status", (s) => s.upgrade !== undefined);
    expect(status.upgrade).toMatchObject({
      upgradeId: UPGRADE_ID,
      outcome: "rolled-back",
      detail: "version 2.0.0 exited (code 3) before it was healthy",
    });
    await h.stop();
    h = null;
    await dirs.remove();
  });

  it("a pending marker for another version is not this agent's to commit", async () => {
    server = await FakeControlServer.start();
    const dirs = await tempDirs("agent-other");
    await writeMarker(dirs.stateDir, marker(dirs.stateDir, { tunnelsUp: [] }));
    h = await startAgent(server, { dirs, version: "1.0.0" });
    await server.waitFor("status");
    await h.agent.refresh();
    expect((await readMarker(dirs.stateDir))?.state).toBe("pending");
    await h.stop();
    h = null;
    await dirs.remove();
  });

  it("removes a partial unpack at start, keeps every version while pending, prunes old ones once committed", async () => {
    server = await FakeControlServer.start();
    const dirs = await tempDirs("agent-prune");
    const versions = versionsPath(dirs.stateDir);
    for (const v of ["0.9.0", "1.0.0", "2.0.0", "3.0.0.unpacking"]) await mkdir(join(versions, v, "dist"), { recursive: true });
    await symlink("2.0.0", join(versions, "current"));
    await writeMarker(dirs.stateDir, marker(dirs.stateDir, { previous: "1.0.0" }));
    h = await startAgent(server, { dirs, version: "2.0.0", statusIntervalMs: 100 });
    await server.waitFor("status");
    await h.agent.refresh();
    expect((await readMarker(dirs.stateDir))?.state).toBe("pending");
    expect((await readdir(versions)).sort()).toEqual(["0.9.0", "1.0.0", "2.0.0", "current"]);
    h.tunnels.reports = [{ id: "t-1", up: true, loss: 0, rtt: 1, jitter: 0, samples: 10 }];
    expect((await h.agent.refresh()).upgrade?.outcome).toBe("committed");
    expect((await readdir(versions)).sort()).toEqual(["1.0.0", "2.0.0", "current"]);
    await h.stop();
    h = null;
    await dirs.remove();
  });
});
