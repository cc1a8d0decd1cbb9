/**
 * Issue 19, remote actions, on the two-sites lab (real server, real agents,
 * real strongSwan): `stop` on site-a takes the tunnel down (site-a's charon
 * is gone, LAN to LAN pings fail) while its agent stays connected and the
 * device shows `dataPlane: stopped`; `start` brings the tunnel back;
 * `restart-agent` makes the agent exit (75) and the lab's supervisor
 * (respawn.mjs, as systemd on a router) start it again: a new agent pid, the
 * device connected again, and the tunnel still up.
 */
import { readFile } from "node:fs/promises";
import { privilegedTestsEnabled, run } from "@tern/netlab";
import { Device, Job } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ensureTunnel, ikeSas } from "./support/ikev2.ts";
import { SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor, waitForPing } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: device actions (stop, start, restart-agent)", SCENARIO_COMMANDS);
const JobsQueued = z.object({ jobIds: z.array(z.string()) });

describe.runIf(enabled)("remote actions on a real router (issue 19)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("two-sites.yaml");
  });
  afterAll(async () => {
    if (s) expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  const act = async (action: string): Promise<Job> => {
    const r = await s.api.call("POST", `/api/devices/${s.deviceId("site-a")}/actions`, JobsQueued, { body: { action } });
    expect(r.status).toBe(202);
    const id = r.data.jobIds[0]!;
    let job: Job | null = null;
    await waitFor(30_000, async () => {
      job = await s.api.get(`/api/jobs/${id}`, Job);
      return job.state === "running" ? `${action} job running` : true;
    });
    return job!;
  };
  /** site-a's strongSwan daemons (`ip netns exec` shares the host's pids: list the namespace's own). */
  const charon = async () => {
    const pids = (await run(["ip", "netns", "pids", s.ns("site-a")], { allowFailure: true })).stdout.split(/\s+/).filter(Boolean);
    const names = await Promise.all(pids.map((p) => readFile(`/proc/${p}/comm`, "utf8").catch(() => "")));
    return names.filter((n) => n.trim() === "charon-systemd").length;
  };
  const pingsAcross = async () => (await s.sh("lan-a-h1", ["ping", "-n", "-c", "2", "-W", "1", "192.168.20.10"])).exitCode === 0;

  it("stop takes the tunnel down with the agent connected; start brings it back; restart-agent reconnects", async () => {
    await ensureTunnel(s, "site-a", "site-b");
    await waitForPing(s, "lan-a-h1", "192.168.20.10", 60_000);

    const stopped = await act("stop");
    expect(stopped, stopped.error?.message).toMatchObject({ type: "stop", state: "complete" });
    expect(await charon()).toBe(0);
    expect(await pingsAcross()).toBe(false);
    const device = await s.api.get(`/api/devices/${s.deviceId("site-a")}`, Device);
    expect(device).toMatchObject({ dataPlane: "stopped", isConnected: true });

    const started = await act("start");
    expect(started, started.error?.message).toMatchObject({ type: "start", state: "complete" });
    expect(await charon()).toBe(1);
    await waitFor(30_000, async () => (/ESTABLISHED/.test(await ikeSas(s, "site-a")) ? true : "no IKE SA yet"));
    await waitForPing(s, "lan-a-h1", "192.168.20.10", 30_000);
    expect((await s.device("site-a")).dataPlane).toBe("running");

    const before = await s.control.agentPid("site-a");
    expect(before).not.toBeNull();
    const restarted = await act("restart-agent");
    expect(restarted, restarted.error?.message).toMatchObject({ type: "restart-agent", state: "complete" });
    await waitFor(30_000, async () => {
      const pid = await s.control.agentPid("site-a");
      return pid !== null && pid !== before ? true : `agent pid ${pid}`;
    });
    await waitFor(30_000, async () => ((await s.device("site-a")).isConnected ? true : "site-a not connected again"));
    // The router kept its tunnel through the agent's restart.
    expect(await pingsAcross()).toBe(true);
  });
});
