/**
 * Scenario 10 of issue 7 on a two-site lab of its own (these faults restart
 * and cut things the other scenarios rely on): an agent killed in the middle
 * of an apply, the server restarted while jobs are in flight, a device cut
 * off from the server. With TERN_TEST_DATABASE_URL (CI) the lab's server runs
 * on a fresh PostgreSQL database, so the restart is the production case;
 * otherwise on its embedded database.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { privilegedTestsEnabled, run } from "@tern/netlab";
import { Device, Job, Tunnel } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentStateDir } from "../../src/lab/control/index.ts";
import { logSize, waitForLog } from "../../src/lab/process-table.ts";
import { ping } from "../helpers.ts";
import { ensureTunnel } from "./support/ikev2.ts";
import { notificationsAbout } from "./support/notifications.ts";
import { type LabDatabase, labDatabase } from "./support/postgres.ts";
import {
  getTunnel,
  JobsQueued,
  jobsComplete,
  LiveChecks,
  SCENARIO_COMMANDS,
  type ScenarioLab,
  upScenarioLab,
  waitFor,
  waitForPing,
} from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: faults", SCENARIO_COMMANDS);
const TunnelsCreated = z.object({ jobIds: z.array(z.string()), tunnels: z.array(z.object({ id: z.string() })) });

describe.runIf(enabled)("faults (scenario 10)", () => {
  let s: ScenarioLab;
  let db: LabDatabase | null = null;
  beforeAll(async () => {
    db = await labDatabase();
    s = await upScenarioLab("two-sites.yaml", { databaseUrl: db?.url });
    console.log(`faults: server on ${db ? "PostgreSQL" : "its embedded database"}`);
  });
  afterAll(async () => {
    if (s) expect(await s.down()).toEqual({ namespaces: [], processes: [] });
    await db?.drop();
  });

  const agentFile = (edge: string, file: string) => join(agentStateDir(s.lab.dir, edge), file);
  const exists = (path: string) =>
    stat(path).then(
      () => true,
      () => false,
    );
  const devicesAligned = async () => {
    const ds = await s.api.get("/api/devices", z.array(Device));
    return ds.every((d) => d.isConnected && d.appliedHash === d.desiredHash)
      ? true
      : `not aligned: ${ds.map((d) => d.name).join(", ")}`;
  };
  /** Every agent running and every device on its desired config: where each fault starts from. */
  async function healthy(): Promise<void> {
    for (const edge of s.lab.plan.edges) await s.control.startAgent(edge);
    await waitFor(120_000, devicesAligned);
  }

  /** Command names of the live processes inside an edge's namespace. */
  const processesIn = async (edge: string) => {
    const r = await run(["ip", "netns", "pids", s.ns(edge)], { allowFailure: true });
    const pids = r.stdout.split(/\s+/).filter(Boolean);
    return (await Promise.all(pids.map((p) => readFile(`/proc/${p}/comm`, "utf8").catch(() => "")))).map((c) => c.trim());
  };

  it("10a. kill -9 of an agent in the middle of an apply: after a restart it converges", async () => {
    await healthy();
    const log = agentFile("site-b", join("logs", "agent.log"));
    const from = await logSize(log);
    const [ifA, ifB] = [await s.iface("site-a", "wan0"), await s.iface("site-b", "wan0")];
    const created = await s.api.call("POST", "/api/tunnels", TunnelsCreated, {
      body: { deviceA: s.deviceId("site-a"), interfaceA: ifA.id, deviceB: s.deviceId("site-b"), interfaceB: ifB.id },
    });
    // The tunnel's apply starts strongSwan: long enough to be caught in the middle. pending.json exists
    // exactly while an apply runs (written before the first driver, removed after the last).
    await waitForLog(log, from, /"msg":"apply started"/, 30_000);
    await waitFor(5000, async () => ((await exists(agentFile("site-b", "pending.json"))) ? true : "no pending.json"), 5);
    await s.control.stopAgent("site-b", "kill");
    expect(await exists(agentFile("site-b", "pending.json"))).toBe(true);
    const jobs = await s.api.get("/api/jobs", z.array(Job), { ids: created.data.jobIds.join(",") });
    expect(jobs.find((j) => j.device.name === "site-b")?.state).not.toBe("complete");

    const t0 = performance.now();
    await s.control.startAgent("site-b");
    await jobsComplete(s.api, created.data.jobIds);
    await waitFor(60_000, devicesAligned);
    expect(await exists(agentFile("site-b", "pending.json"))).toBe(false);
    await waitForPing(s, "lan-a-h1", "192.168.20.10");
    console.log(
      `scenario 10a: agent killed mid-apply → restarted → converged in ${((performance.now() - t0) / 1000).toFixed(1)}s`,
    );
    // One strongSwan, not a second one next to the one the cut-short apply started.
    expect((await processesIn("site-b")).filter((n) => n === "charon-systemd")).toHaveLength(1);
  });

  it("10b. the server restarts while jobs are in flight: they complete", async () => {
    await healthy();
    await ensureTunnel(s, "site-a", "site-b");
    const pids = { a: (await s.control.agentPid("site-a"))!, b: (await s.control.agentPid("site-b"))! };
    const lanB = await s.iface("site-b", "lan0");
    // Both agents are frozen, so the applies the change sends them cannot finish before the server goes.
    for (const pid of Object.values(pids)) process.kill(pid, "SIGSTOP");
    let jobIds: string[] = [];
    try {
      const dhcp = await s.api.call("PUT", `/api/devices/${s.deviceId("site-b")}`, JobsQueued.partial(), {
        body: { dhcp: [{ interface: lanB.devId, rangeStart: "192.168.20.100", rangeEnd: "192.168.20.150" }] },
      });
      const route = await s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), {
        body: { staticRoutes: [{ destination: "198.51.100.0/24", gateway: "100.64.1.1", ifname: "wan0", metric: 50 }] },
      });
      jobIds = [...(dhcp.data.jobIds ?? []), ...(route.data.jobIds ?? [])];
      expect(jobIds).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 1000));
      const before = await s.api.get("/api/jobs", z.array(Job), { ids: jobIds.join(",") });
      expect(before.map((j) => j.state).sort()).not.toContain("complete");

      const t0 = performance.now();
      await s.control.restartServer();
      console.log(`scenario 10b: server restarted in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
    } finally {
      for (const pid of Object.values(pids)) process.kill(pid, "SIGCONT");
    }
    const t1 = performance.now();
    const done = await jobsComplete(s.api, jobIds, 180_000);
    console.log(`scenario 10b: agents resumed → jobs complete in ${((performance.now() - t1) / 1000).toFixed(1)}s`);
    expect(done.map((j) => j.state)).toEqual(["complete", "complete"]);
    await waitFor(60_000, devicesAligned);
    // What the jobs carried is on the routers.
    expect((await s.sh("site-a", ["ip", "route", "show", "198.51.100.0/24"])).stdout).toContain("via 100.64.1.1");
    expect(await processesIn("site-b")).toContain("kea-dhcp4");
    const undo = [
      await s.api.call("PUT", `/api/devices/${s.deviceId("site-b")}`, JobsQueued.partial(), { body: { dhcp: [] } }),
      await s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), { body: { staticRoutes: [] } }),
    ];
    await jobsComplete(
      s.api,
      undo.flatMap((u) => u.data.jobIds ?? []),
    );
  });

  it("10c. a device loses its server: status N/A and a device-connection notification, cleared on reconnect", async () => {
    const live = new LiveChecks();
    await healthy();
    const tunnel = await ensureTunnel(s, "site-a", "site-b");
    await waitForPing(s, "lan-a-h1", "192.168.20.10");
    const siteB = s.deviceId("site-b");
    // Raise after 5 s without a connection instead of the default minute.
    await s.api.put("/api/notificationsConf", z.unknown(), {
      rules: { "device-connection": { enabled: true, warningThreshold: 5, thresholdUnit: "s", resolvedAlert: true } },
    });
    const cutAt = new Date();
    await s.control.disconnect("site-b");
    try {
      await waitFor(30_000, async () => {
        const d = await s.device("site-b");
        return !d.isConnected && d.connection === "disconnected" ? true : `site-b ${d.connection}`;
      });
      await waitFor(30_000, async () => {
        const t = await getTunnel(s.api, tunnel.id);
        return t.status === "N/A" ? true : `tunnel status ${t.status}`;
      });
      // The router keeps its configuration: the sites still talk through the tunnel.
      expect((await ping(s.ns("lan-a-h1"), "192.168.20.10", 5, 0.1)).received).toBe(5);
      await live.wait("device-connection notification raised for site-b", 90_000, async () => {
        const n = (await notificationsAbout(s.api, { deviceId: siteB }, ["device-connection"])).filter(
          (x) => new Date(x.createdAt) >= cutAt,
        );
        return n.length > 0 ? true : "none yet";
      });
    } finally {
      await s.control.reconnect("site-b");
    }
    // The agent comes back with its reconnect back-off (at most 60 s).
    await waitFor(120_000, async () => ((await s.device("site-b")).isConnected ? true : "site-b not connected again"));
    await waitFor(30_000, async () => {
      const t = await s.api.get("/api/tunnels", z.array(Tunnel));
      return t.every((x) => x.status !== "N/A") ? true : "a tunnel is still N/A";
    });
    await live.wait("device-connection notification resolved after the reconnect", 60_000, async () => {
      const open = (await notificationsAbout(s.api, { deviceId: siteB }, ["device-connection"])).filter((x) => !x.resolved);
      return open.length === 0 ? true : `still open: ${open.map((x) => x.details).join("; ")}`;
    });
    live.assertAll();
  });
});
