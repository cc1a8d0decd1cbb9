/**
 * POST /api/devices/diagnostics: one diagnostic on many devices, one stream.
 * Two simulated devices are connected (the simulator answers one-shot, as an
 * older agent), one is not: the connected ones stream their lines and result,
 * the offline one an error, each event naming its device, then a summary;
 * every run is a job.
 */
import type { Job, TokenPair } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useGatewayServer } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";

const g = useGatewayServer();

async function adminToken(): Promise<string> {
  const res = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  return ((await res.json()) as TokenPair).accessToken;
}

async function getJson<T>(token: string, path: string): Promise<T> {
  const res = await fetch(`${g.server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

type FleetEvent = { type: string; deviceId?: string; jobId?: string | null; code?: string; lines?: string[] } & Record<
  string,
  unknown
>;

/** Every event of a stream that ends by itself. */
async function events(res: Response): Promise<FleetEvent[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .flatMap((block) => block.split("\n").filter((l) => l.startsWith("data:")))
    .map((l) => JSON.parse(l.slice(5)) as FleetEvent);
}

describe("a diagnostic on many devices", () => {
  it("streams each device's run with its deviceId, an offline device's error, then a summary; each run is a job", async () => {
    const token = await adminToken();
    const { devices: online } = await g.fleet(2, { queueConfig: false });
    const { devices: offline } = await g.fleet(1, { queueConfig: false, connect: false });
    const ids = [...online, ...offline].map((d) => d.id);
    const res = await fetch(`${g.server.url}/api/devices/diagnostics`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "traceroute", params: { target: "192.0.2.9" }, deviceIds: ids }),
    });
    const all = await events(res);

    for (const d of online) {
      const own = all.filter((e) => e.deviceId === d.id);
      expect(own.map((e) => e.type)).toEqual(["started", "lines", "result"]);
      expect(own[1]!.lines).toContain("traceroute to 192.0.2.9");
      const job = await getJson<Job>(token, `/api/jobs/${own[0]!.jobId}`);
      expect(job).toMatchObject({ type: "traceroute", state: "complete", device: { id: d.id } });
    }
    const away = all.filter((e) => e.deviceId === offline[0]!.id);
    expect(away).toEqual([expect.objectContaining({ type: "error", code: "DEVICE_NOT_CONNECTED", jobId: null })]);
    const filter = encodeURIComponent(JSON.stringify([{ key: "device.id", op: "==", val: offline[0]!.id }]));
    const failedJobs = await getJson<Job[]>(token, `/api/jobs?filter=${filter}`);
    expect(failedJobs.map((j) => [j.type, j.state])).toEqual([["traceroute", "failed"]]);
    expect(all.at(-1)).toEqual({ type: "summary", devices: 3, succeeded: 2, failed: 1, cancelled: 0 });
  });
});
