/**
 * The dual-WAN lab's multi-link policy used by the routing and kernel-events
 * scenarios: site-a's wan0 labelled isp1 and wan1 isp2, ICMP toward site-b's
 * isp1 address sent by link quality over isp1, else isp2, installed on site-a.
 */
import { type LinkQualityThresholds, MlPolicy, PathLabel } from "@tern/protocol";
import { JobsQueued, jobsComplete, type ScenarioLab } from "./scenario-lab.ts";

export async function installIcmpQualityPolicy(
  s: ScenarioLab,
  name: string,
  linkQuality: LinkQualityThresholds,
): Promise<{ policy: MlPolicy; labels: PathLabel[] }> {
  const label = (n: string) => s.api.post("/api/pathlabels", PathLabel, { name: n, type: "DIA" });
  const [isp1, isp2] = [await label("isp1"), await label("isp2")];
  const [wan0, wan1] = [await s.iface("site-a", "wan0"), await s.iface("site-a", "wan1")];
  const labelled = await s.api.call("PUT", `/api/devices/${s.deviceId("site-a")}`, JobsQueued.partial(), {
    body: {
      interfaces: [
        { ...wan0, pathlabels: [isp1.id] },
        { ...wan1, pathlabels: [isp2.id] },
      ],
    },
  });
  await jobsComplete(s.api, labelled.data.jobIds ?? []);
  const policy = await s.api.post("/api/mlpolicies", MlPolicy, {
    name,
    rules: [
      {
        name: "icmp-to-b",
        priority: 10,
        match: { destination: `${s.lab.wanAddress("site-b", "isp1")}/32`, protocol: "icmp" },
        action: { order: "link-quality", pathlabels: [isp1.id, isp2.id], fallback: "by-destination", linkQuality },
      },
    ],
  });
  const installed = await s.api.call("POST", `/api/mlpolicies/${policy.id}/install`, JobsQueued, {
    body: { deviceIds: [s.deviceId("site-a")] },
  });
  await jobsComplete(s.api, installed.data.jobIds);
  return { policy, labels: [isp1, isp2] };
}
