/**
 * Scenario 9 of issue 7 on the dual-WAN lab (topologies/dual-wan.yaml):
 * site-a reaches the internet through isp1 (wan0, 5 ms) and isp2 (wan1,
 * 15 ± 2 ms). The admin labels the WANs, and a `link-quality` multi-link
 * policy sends ICMP toward site-b's isp1 address over isp1 while isp1 meets
 * 5 % loss / 100 ms / 50 ms jitter, else over isp2. Which ISP carries the
 * traffic is read from packet counters at each ISP (the cloud routers).
 *
 * Stated times (also in docs/lab.md): each WAN's gateway is probed 5 times
 * a second; the policy judges the newest 30 s of probes (150; the status
 * report's window is a minute). With 50 % of isp1's answers lost, loss
 * exceeds 5 % after about 8 lost probes: traffic moves within 20 s
 * (typically 2–6 s; 2.5 s in the last run). After recovery the 30 s must hold
 * at most 7 lost probes again (up to 30 s) and isp1 must stay good for the
 * hold-down (5 s): traffic moves back within 60 s (34.5 s in the last run).
 *
 * Healing is off in this scenario, so it tests the rule's thresholds alone.
 * At 50 % loss the gateway now and then answers none of 5 probes in a row,
 * a second of silence that flap damping (docs/healing.md) counts as a flap;
 * two within a minute hold isp1 down for about 85 s after the loss ends, as
 * designed. Over the 6–10 s isp1 is lossy here that happens in about one run
 * in ten (a CI run met it: traffic stayed on isp2 past 60 s). The healing
 * scenarios test damping itself.
 */

import { privilegedTestsEnabled } from "@tern/netlab";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { installIcmpQualityPolicy } from "./support/dual-wan-policy.ts";
import {
  JobsQueued,
  jobsComplete,
  SCENARIO_COMMANDS,
  type ScenarioLab,
  setHealingMode,
  upScenarioLab,
  waitFor,
} from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: quality based routing", SCENARIO_COMMANDS);
const MOVE_LIMIT_MS = 20_000;
const BACK_LIMIT_MS = 60_000;

describe.runIf(enabled)("quality based routing over two WANs (scenario 9)", () => {
  let s: ScenarioLab;
  beforeAll(async () => {
    s = await upScenarioLab("dual-wan.yaml");
  });
  afterAll(async () => {
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  /** Packets each ISP received from site-a per second, over `ms`. */
  async function ispRates(ms = 1000): Promise<{ isp1: number; isp2: number }> {
    const rx = async (cloud: string) => {
      const r = await s.sh(cloud, ["ip", "-s", "-j", "link", "show", "dev", "site-a"]);
      return (JSON.parse(r.stdout) as { stats64: { rx: { packets: number } } }[])[0]!.stats64.rx.packets;
    };
    const [a1, a2] = [await rx("isp1"), await rx("isp2")];
    await new Promise((r) => setTimeout(r, ms));
    const [b1, b2] = [await rx("isp1"), await rx("isp2")];
    return { isp1: ((b1 - a1) * 1000) / ms, isp2: ((b2 - a2) * 1000) / ms };
  }

  /** Waits until `isp` carries the 20 pps stream (the other sees only probes); returns the time it took. */
  async function carriedBy(isp: "isp1" | "isp2", limitMs: number): Promise<number> {
    const other = isp === "isp1" ? "isp2" : "isp1";
    const t0 = performance.now();
    let last = { isp1: 0, isp2: 0 };
    await waitFor(
      limitMs,
      async () => {
        last = await ispRates(1000);
        return last[isp] >= 12 && last[other] <= 6 ? true : `rates ${JSON.stringify(last)}`;
      },
      0,
    );
    return performance.now() - t0;
  }

  it("9. quality based routing: degrading isp1 moves matching traffic to isp2 within 20 s, and back within 60 s after recovery", async () => {
    await setHealingMode(s, "off");
    const { policy, labels } = await installIcmpQualityPolicy(s, "to-site-b", {
      maxLossPercent: 5,
      maxLatencyMs: 100,
      maxJitterMs: 50,
      holdDownSeconds: 5,
    });
    const put = (body: unknown) => s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), { body });
    const [wan0, wan1] = [await s.iface("site-a", "wan0"), await s.iface("site-a", "wan1")];

    // 20 pings a second from the LAN toward site-b's isp1 address: the matching traffic.
    let stream: ResultPromise | null = execa(
      "ip",
      ["netns", "exec", s.ns("lan-a-h1"), "ping", "-n", "-q", "-i", "0.05", s.lab.wanAddress("site-b", "isp1")],
      { reject: false },
    );
    try {
      await carriedBy("isp1", 30_000);
      await s.lab.impair("isp1:site-a", { lossPercent: 50 });
      const moved = await carriedBy("isp2", MOVE_LIMIT_MS);
      console.log(`scenario 9: isp1 degraded (50 % loss) → traffic on isp2 after ${(moved / 1000).toFixed(1)}s`);
      // It stays on isp2 while isp1 is bad.
      const steady = await ispRates(3000);
      expect(steady.isp2).toBeGreaterThanOrEqual(12);
      expect(steady.isp1).toBeLessThanOrEqual(6);

      await s.lab.impair("isp1:site-a", { lossPercent: 0 });
      const back = await carriedBy("isp1", BACK_LIMIT_MS);
      console.log(`scenario 9: isp1 recovered → traffic back on isp1 after ${(back / 1000).toFixed(1)}s`);
    } finally {
      stream?.kill("SIGKILL");
      await stream;
      stream = null;
      await s.lab.impair("isp1:site-a", { lossPercent: 0 });
      await jobsComplete(
        s.api,
        (
          await s.api.call("POST", `/api/mlpolicies/${policy.id}/uninstall`, JobsQueued, {
            body: { deviceIds: [s.deviceId("site-a")] },
          })
        ).data.jobIds,
      );
      await s.api.delete(`/api/mlpolicies/${policy.id}`);
      await jobsComplete(
        s.api,
        (
          await put({
            interfaces: [
              { ...wan0, pathlabels: [] },
              { ...wan1, pathlabels: [] },
            ],
          })
        ).data.jobIds ?? [],
      );
      for (const l of labels) await s.api.delete(`/api/pathlabels/${l.id}`, z.unknown());
      await setHealingMode(s, "act");
    }
    // Without the policy the matching traffic follows the main table again: isp1, the primary default route.
    const plain = (await s.sh("site-a", ["ip", "rule", "show"])).stdout;
    expect(plain).not.toMatch(/^30000:/m);
  });
});
