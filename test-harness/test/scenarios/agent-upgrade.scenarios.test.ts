/**
 * Staged agent upgrades (issue 19, docs/upgrades.md) on the hub-and-spokes lab (topologies/hub-spokes.yaml):
 * the test builds TWO REAL agent packages from this repository's bundle (versions 0.1.0-lab.1 and
 * 0.1.0-lab.2) and signs them with a key the agents trust (TERN_AGENT_UPGRADE_KEYS, inherited by the lab's
 * agents). Every router first runs lab.1 (unpacked into its versions/ and started through the launcher), then
 * one rollout upgrades the three to lab.2, all in one batch. Right after spoke1 installed, the lab cuts its
 * path to the server (its relay): the new version cannot connect, so it is not healthy within the health time;
 * the launcher's guard rolls it back to lab.1; the path comes back and the old version reports the rollback.
 * The rollout report says: hub and spoke2 upgraded, spoke1 rolled back; the devices say which version they run.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, readlink, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { AgentVersionCount, Rollout, RolloutReport } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
// @ts-expect-error: a plain JavaScript module without types
import * as tool from "../../../packaging/agent-package.mjs";
import { agentStateDir } from "../../src/lab/control/agents.ts";
import { SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: agent upgrade", [...SCENARIO_COMMANDS, "tar"]);
const FROM = "0.1.0-lab.1";
const TO = "0.1.0-lab.2";
const EDGES = ["hub", "spoke1", "spoke2"];
const FAILING = "spoke1";

interface Built {
  file: string;
  sig: { version: string; sha256: string; signature: string; publicKey: string };
}

describe.runIf(enabled)("agent upgrade (issue 19)", () => {
  let s: ScenarioLab;
  let work: string;
  let from: Built;
  let to: Built;
  const keyBefore = process.env.TERN_AGENT_UPGRADE_KEYS;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "tern-upgrade-scenario-"));
    const keys = tool.generateSigningKeys() as { privateKeyPem: string; publicKey: string };
    const build = async (version: string): Promise<Built> => {
      const file: string = await tool.buildPackage({ version, out: join(work, `tern-agent-${version}.tar.gz`) });
      return { file, sig: tool.signPackageBytes(await readFile(file), version, keys.privateKeyPem) };
    };
    [from, to] = await Promise.all([build(FROM), build(TO)]);
    // The lab's agents inherit the environment: they trust the operator's key (a setting of the router, not the server's).
    process.env.TERN_AGENT_UPGRADE_KEYS = keys.publicKey;
    s = await upScenarioLab("hub-spokes.yaml");
  }, 240_000);

  afterAll(async () => {
    if (keyBefore === undefined) delete process.env.TERN_AGENT_UPGRADE_KEYS;
    else process.env.TERN_AGENT_UPGRADE_KEYS = keyBefore;
    if (s) {
      const { namespaces, processes } = await s.down();
      expect(namespaces).toEqual([]);
      expect(processes).toEqual([]);
    }
    if (work) await rm(work, { recursive: true, force: true });
  }, 120_000);

  const stateDir = (edge: string) => agentStateDir(s.lab.dir, edge);

  async function versions(): Promise<Record<string, string>> {
    const counts = await s.api.get("/api/agent-versions", z.array(AgentVersionCount));
    return Object.fromEntries(counts.map((c) => [c.version, String(c.devices)]));
  }

  it("upgrades two routers to the next version and rolls back the one that is not healthy; the report says so", async () => {
    const t0 = performance.now();
    // Every router runs the first package: unpacked beside the repository's bundle, started through the launcher.
    await Promise.all(
      EDGES.map(async (edge) => {
        await s.control.stopAgent(edge, "term");
        const dir = join(stateDir(edge), "versions", FROM);
        await mkdir(dir, { recursive: true });
        execFileSync("tar", ["-xzf", from.file, "-C", dir]);
        await symlink(FROM, join(stateDir(edge), "versions", "current"));
        await s.control.startAgent(edge);
      }),
    );
    await waitFor(60_000, async () =>
      (await versions())[FROM] === "3" ? true : `versions: ${JSON.stringify(await versions())}`,
    );

    // The operator's side: register the key, upload the signed package (raw body, signature as headers).
    const login = await fetch(`${s.control.plan.apiUrl}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: s.control.plan.admin.email, password: s.control.plan.admin.password }),
    });
    const token = ((await login.json()) as { accessToken: string }).accessToken;
    await s.api.post("/api/agent-signing-keys", z.unknown(), { name: "lab release key", publicKey: to.sig.publicKey });
    const upload = await fetch(`${s.control.plan.apiUrl}/api/agent-packages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        "x-tern-package-version": to.sig.version,
        "x-tern-package-sha256": to.sig.sha256,
        "x-tern-package-signature": to.sig.signature,
        "x-tern-package-public-key": to.sig.publicKey,
      },
      body: await readFile(to.file),
    });
    expect(upload.status, await upload.clone().text()).toBe(201);
    const pkg = (await upload.json()) as { id: string };

    const rollout = await s.api.post("/api/agent-upgrades", Rollout, {
      package: pkg.id,
      target: { deviceIds: EDGES.map((e) => s.deviceId(e)) },
      canaryPercent: 0,
      batchSize: 3,
      healthTimeoutSec: 10,
    });
    const report = () => s.api.get(`/api/agent-upgrades/${rollout.id}`, RolloutReport);
    const failingId = s.deviceId(FAILING);

    // The lab cuts spoke1's path to the server as soon as it installed: its new version will not get through.
    await waitFor(
      60_000,
      async () => {
        const d = (await report()).devices.find((x) => x.device === failingId);
        return d?.state === "installing" ? true : `spoke1: ${d?.state}`;
      },
      50,
    );
    await s.control.disconnect(FAILING);
    // The guard (the launcher's code, not the new version's) rolls back once the health time is over.
    const marker = join(stateDir(FAILING), "upgrade", "marker.json");
    await waitFor(40_000, async () => {
      const m = JSON.parse(await readFile(marker, "utf8").catch(() => "{}")) as { state?: string };
      return m.state === "rolled-back" ? true : `spoke1 marker: ${m.state}`;
    });
    expect(await readlink(join(stateDir(FAILING), "versions", "current"))).toBe(FROM);
    await s.control.reconnect(FAILING);

    await waitFor(60_000, async () => {
      const r = await report();
      return r.state === "complete" ? true : `rollout ${r.state}: ${r.devices.map((d) => `${d.name} ${d.state}`).join(", ")}`;
    });
    const done = await report();
    const byEdge = Object.fromEntries(done.devices.map((d) => [EDGES.find((e) => s.deviceId(e) === d.device), d]));
    console.log(
      `agent upgrade: ${done.devices.map((d) => `${d.name} ${d.state}${d.detail ? ` (${d.detail})` : ""}`).join("; ")}; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    expect(byEdge.hub).toMatchObject({ state: "upgraded", fromVersion: FROM });
    expect(byEdge.spoke2).toMatchObject({ state: "upgraded", fromVersion: FROM });
    expect(byEdge.spoke1).toMatchObject({ state: "rolled-back", fromVersion: FROM });
    expect(byEdge.spoke1!.detail).toMatch(/not healthy within 10 s/);
    expect(done.counts).toMatchObject({ upgraded: 2, "rolled-back": 1, failed: 0 });
    // The devices say what they run: two on the new version, the rolled-back one on the old.
    await waitFor(30_000, async () => {
      const v = await versions();
      return v[TO] === "2" && v[FROM] === "1" ? true : `versions: ${JSON.stringify(v)}`;
    });
    for (const edge of ["hub", "spoke2"]) expect(await readlink(join(stateDir(edge), "versions", "current"))).toBe(TO);
  }, 180_000);
});
