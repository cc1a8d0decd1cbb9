/**
 * Scenario 7 of issue 7 on the VRRP lab (topologies/vrrp-pair.yaml): vr-a
 * (.2) and vr-b (.3) share the office LAN's virtual IP .1, which the office
 * hosts use as their gateway. vr-a, the preferred master, loses power (its
 * agent and daemons are killed); the backup takes the address over.
 *
 * Stated time (also in docs/lab.md): with 100 ms adverts a backup declares
 * the master dead after 3 missed adverts plus its skew time (≈ 0.34 s in
 * LAB-NOTES.md); the scenario allows 2 s for a loaded 2-core host.
 */
import { privilegedTestsEnabled } from "@tern/netlab";
import { VrrpGroup, VrrpGroupStatus } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ping } from "../helpers.ts";
import {
  JobsQueued,
  jobsComplete,
  LiveChecks,
  powerOff,
  powerOn,
  SCENARIO_COMMANDS,
  type ScenarioLab,
  upScenarioLab,
  waitFor,
} from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: VRRP", SCENARIO_COMMANDS);
const VIP = "192.168.70.1";
const FAILOVER_LIMIT_MS = 2000;

describe.runIf(enabled)("VRRP pair (scenario 7)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("vrrp-pair.yaml");
  });
  afterAll(async () => {
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  const holdsVip = async (edge: string) =>
    (await s.sh(edge, ["ip", "-4", "-o", "addr", "show", "dev", "lan0"])).stdout.includes(` ${VIP}/24 `);

  /** Member states as GET /api/vrrp/status shows them, by device name. */
  async function states(groupId: string): Promise<Record<string, string>> {
    const all = await s.api.get("/api/vrrp/status", z.array(VrrpGroupStatus));
    const g = all.find((x) => x.id === groupId);
    return Object.fromEntries((g?.devices ?? []).map((d) => [d.name, d.state]));
  }

  it("7. VRRP: two routers share the virtual IP; the master stops, the backup has it within 2 s; GET /vrrp/status shows the states", async () => {
    const live = new LiveChecks();
    const [lanA, lanB] = await Promise.all([s.iface("vr-a", "lan0"), s.iface("vr-b", "lan0")]);
    const created = await s.api.call("POST", "/api/vrrp", VrrpGroup.extend({ jobIds: z.array(z.string()) }), {
      body: {
        name: "office",
        virtualRouterId: 70,
        virtualIp: VIP,
        preemption: true,
        // The master answers for the virtual IP itself (VRRPv3 accept mode), so the office can ping its gateway.
        acceptMode: true,
        advertIntervalMs: 100,
        devices: [
          { device: s.deviceId("vr-a"), interface: lanA.devId, priority: 200 },
          { device: s.deviceId("vr-b"), interface: lanB.devId, priority: 100 },
        ],
      },
    });
    const group = created.data;
    expect(created.data.jobIds).toHaveLength(2);
    await jobsComplete(s.api, created.data.jobIds);
    try {
      await waitFor(20_000, async () =>
        (await holdsVip("vr-a")) && !(await holdsVip("vr-b")) ? true : "vr-a is not master yet",
      );
      // The office host uses the virtual IP as its gateway.
      expect((await ping(s.ns("office-h1"), VIP, 3, 0.1)).received).toBe(3);
      await live.wait("GET /vrrp/status: vr-a MASTER, vr-b BACKUP", 30_000, async () => {
        const st = await states(group.id);
        return st["vr-a"] === "MASTER" && st["vr-b"] === "BACKUP" ? true : `states ${JSON.stringify(st)}`;
      });

      // vr-a loses power.
      const t0 = performance.now();
      await powerOff(s, "vr-a");
      let failoverMs = 0;
      await waitFor(
        10_000,
        async () => {
          if (!(await holdsVip("vr-b"))) return "vr-b does not hold the virtual IP";
          failoverMs = performance.now() - t0;
          return true;
        },
        20,
      );
      console.log(`scenario 7: master killed → virtual IP on the backup after ${failoverMs.toFixed(0)} ms`);
      expect(failoverMs).toBeLessThanOrEqual(FAILOVER_LIMIT_MS);
      // The office keeps its gateway (the new master announced the address with gratuitous ARP).
      await waitFor(5000, async () =>
        (await ping(s.ns("office-h1"), VIP, 1, 0.1)).received === 1 ? true : "no answer from the VIP",
      );
      await live.wait("GET /vrrp/status: vr-b MASTER, vr-a not connected", 60_000, async () => {
        const all = await s.api.get("/api/vrrp/status", z.array(VrrpGroupStatus));
        const g = all.find((x) => x.id === group.id);
        const a = g?.devices.find((d) => d.name === "vr-a");
        const b = g?.devices.find((d) => d.name === "vr-b");
        return b?.state === "MASTER" && a?.isConnected === false && a.state === "unknown"
          ? true
          : `group ${JSON.stringify(g?.devices)}`;
      });

      // Power back: vr-a re-applies its configuration and, preferred and preempting, takes the address back.
      await powerOn(s, "vr-a");
      await waitFor(60_000, async () =>
        (await holdsVip("vr-a")) && !(await holdsVip("vr-b")) ? true : "vr-a has not taken the address back",
      );
      await live.wait("GET /vrrp/status after recovery: vr-a MASTER, vr-b BACKUP", 60_000, async () => {
        const st = await states(group.id);
        return st["vr-a"] === "MASTER" && st["vr-b"] === "BACKUP" ? true : `states ${JSON.stringify(st)}`;
      });
    } finally {
      await powerOn(s, "vr-a");
      const del = await s.api.call("DELETE", `/api/vrrp/${group.id}`, JobsQueued);
      await jobsComplete(s.api, del.data.jobIds);
    }
    expect([await holdsVip("vr-a"), await holdsVip("vr-b")]).toEqual([false, false]);
    live.assertAll();
  });
});
