/**
 * Tunnel status from live data, driven by simulated devices: Pending while a
 * configuration job is in flight, Connected when both ends report the tunnel
 * up (with their loss, RTT and jitter), Not Connected when an end reports it
 * down, N/A when an end's device is not connected; the `tunnel-status` duty
 * stores each (services/tunnels/stored-status.ts). And the samples behind it:
 * `GET /tunnels/{id}/stats`, raw or downsampled.
 */
import type { Tunnel, TunnelStats } from "@tern/protocol";
import { TunnelStats as TunnelStatsSchema } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "../../src/services/statistics/partitions.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import type { AdminClient } from "../support/onboarding.ts";

const g = useGatewayServer({ TERN_INGEST_FLUSH_MS: "50" });
let api: AdminClient;

beforeAll(async () => {
  api = await g.api();
});

const read = async (id: string) => (await api.call<Tunnel>("GET", `/api/tunnels/${id}`)).body;

/** The status the `tunnel-status` duty stored for the tunnel, once its markers are folded (null until then). */
const stored = async (id: string) => {
  const { rows } = await sql<{ status: string; tunnel_status: string }>`select s.status, s.tunnel_status
    from tunnel_status s where s.id = ${id}::uuid and not exists (select 1 from tunnel_status_marks m
      where m.tunnel_id = s.id or m.device_id in (s.device_a, s.device_b))`.execute(g.database.db);
  return rows[0] ?? null;
};

describe("tunnel status from both ends' reports", () => {
  it("goes Pending → Connected → Not Connected → N/A", async () => {
    const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
    const [a, b] = [fleet.device(0), fleet.device(1)];
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 2,
    );
    // B applies slowly: the new tunnel is pending while its job is in flight.
    b.setApplyBehaviour({ delayMs: 2000 });
    const { id, jobIds } = await g.tunnel(devices[0]!, devices[1]!);
    const pending = await waitUntil(
      () => read(id),
      (t) => t.isPending && t.pendingReason.includes(`waiting for device ${b.hostname} to apply configuration`),
    );
    expect(pending).toMatchObject({ tunnelStatus: "Pending", status: "Pending", quality: { a: null, b: null } });

    await g.waitForJobs(jobIds, "complete");
    b.setApplyBehaviour(null);
    a.setTunnelMetrics({ up: true, loss: 1.5, rtt: 42, jitter: 3 });
    b.setTunnelMetrics({ up: true, loss: 0, rtt: 40, jitter: 2 });
    a.sendStatus();
    b.sendStatus();
    const connected = await waitUntil(
      () => read(id),
      (t) => t.status === "Connected",
    );
    expect(connected).toMatchObject({
      tunnelStatus: "Connected",
      isPending: false,
      pendingReason: "",
      tunnelStatusA: "up",
      tunnelStatusB: "up",
      quality: { a: { loss: 1.5, rtt: 42, jitter: 3, up: true }, b: { loss: 0, rtt: 40, jitter: 2, up: true } },
    });
    // The duty stores it (pages in status order read the stored status).
    await waitUntil(
      () => stored(id),
      (r) => r?.status === "Connected" && r.tunnel_status === "Connected",
    );
    // The list and the device's own list say the same, and filter on it in SQL.
    const listed = await api.call<Tunnel[]>("GET", "/api/tunnels", {
      query: { filter: JSON.stringify([{ key: "status", op: "==", val: "Connected" }]) },
    });
    expect(listed.body.map((t) => t.id)).toContain(id);
    const ofDevice = await api.call<Tunnel[]>("GET", `/api/devices/${devices[1]!.id}/tunnels`);
    expect(ofDevice.body.find((t) => t.id === id)).toEqual(connected);

    b.setTunnelMetrics({ up: false });
    b.sendStatus();
    const down = await waitUntil(
      () => read(id),
      (t) => t.status === "Not Connected",
    );
    expect(down).toMatchObject({ tunnelStatus: "Not Connected", tunnelStatusA: "up", tunnelStatusB: "down", isPending: false });

    await b.disconnect();
    const na = await waitUntil(
      () => read(id),
      (t) => t.status === "N/A",
    );
    // The tunnel itself is configured on both ends; only the overall status says a device is away.
    expect(na).toMatchObject({ tunnelStatus: "Not Connected", tunnelStatusB: "unknown", isPending: false });
    await waitUntil(
      () => stored(id),
      (r) => r?.status === "N/A" && r.tunnel_status === "Not Connected",
    );
    // The last figures stay visible with their time.
    expect(na.quality.b).toMatchObject({ up: false });

    await b.connect();
    b.setTunnelMetrics({ up: true, rtt: 41 });
    b.sendStatus();
    await waitUntil(
      () => read(id),
      (t) => t.status === "Connected",
    );
    await waitUntil(
      () => stored(id),
      (r) => r?.status === "Connected",
    );
  });
});

describe("GET /api/tunnels/{id}/stats", () => {
  it("returns both ends' samples in a time range", async () => {
    const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
    const { id, jobIds } = await g.tunnel(devices[0]!, devices[1]!);
    await g.waitForJobs(jobIds, "complete");
    await waitUntil(
      () => fleet.devices.every((d) => d.tunnels.includes(id)),
      (ok) => ok,
    );
    const from = new Date().toISOString();
    for (const rtt of [10, 20, 30]) {
      fleet.setTunnelMetrics({ up: true, rtt, loss: 0, jitter: 1 });
      for (const d of fleet.devices) d.sendStatus();
      await new Promise((r) => setTimeout(r, 30));
    }
    const stats = await waitUntil(
      async () => (await api.call<TunnelStats>("GET", `/api/tunnels/${id}/stats`, { query: { from } })).body,
      (s) => s.samples.length === 6,
    );
    expect(TunnelStatsSchema.parse(stats)).toMatchObject({ tunnelId: id, bucketSeconds: null, from });
    expect(stats.samples.filter((s) => s.side === "a").map((s) => s.rtt)).toEqual([10, 20, 30]);
    expect(stats.samples.filter((s) => s.side === "b").map((s) => s.rtt)).toEqual([10, 20, 30]);
    // Default range: the last hour.
    const recent = (await api.call<TunnelStats>("GET", `/api/tunnels/${id}/stats`)).body;
    expect(recent.samples).toHaveLength(6);
    expect(new Date(recent.to).getTime() - new Date(recent.from).getTime()).toBe(3_600_000);
  });

  it("averages long ranges over time buckets, per end", async () => {
    const { devices } = await g.fleet(2, { connect: false, queueConfig: false });
    const { id } = await g.tunnel(devices[0]!, devices[1]!, { queue: false });
    // Two hours ago on a whole minute; its day's partition may be yesterday's, which a new database lacks.
    const start = Math.floor((Date.now() - 7_200_000) / 60_000) * 60_000;
    await ensurePartitions(g.database.db, Date.now(), start, ["tunnel_samples"]);
    // 3600 samples per end, one per second for an hour: RTT = the minute number, down in minute 30.
    const rows = Array.from({ length: 3600 }, (_, s) => s).flatMap((s) =>
      (["a", "b"] as const).map((side) => ({
        tunnel_id: id,
        device_id: devices[side === "a" ? 0 : 1]!.id,
        side,
        at: new Date(start + s * 1000),
        up: Math.floor(s / 60) !== 30,
        loss: side === "a" ? 1 : 2,
        rtt: Math.floor(s / 60),
        jitter: 0.5,
        samples: 10,
      })),
    );
    for (let i = 0; i < rows.length; i += 1000)
      await g.database.db
        .insertInto("tunnel_samples")
        .values(rows.slice(i, i + 1000))
        .execute();
    const stats = (
      await api.call<TunnelStats>("GET", `/api/tunnels/${id}/stats`, {
        query: { from: new Date(start).toISOString(), to: new Date(start + 3_600_000).toISOString(), maxPoints: 60 },
      })
    ).body;
    expect(stats, JSON.stringify(stats).slice(0, 500)).toHaveProperty("bucketSeconds", 60);
    const a = stats.samples.filter((s) => s.side === "a");
    expect(a).toHaveLength(60);
    expect(stats.samples.filter((s) => s.side === "b")).toHaveLength(60);
    expect(a[5]).toEqual({ at: new Date(start + 5 * 60_000).toISOString(), side: "a", loss: 1, rtt: 5, jitter: 0.5, up: true });
    expect(a[30]?.up).toBe(false);
    expect(a[31]?.up).toBe(true);
    // Under the limit: every sample as stored.
    const raw = (
      await api.call<TunnelStats>("GET", `/api/tunnels/${id}/stats`, {
        query: { from: new Date(start).toISOString(), to: new Date(start + 59_000).toISOString() },
      })
    ).body;
    expect(raw.bucketSeconds).toBeNull();
    expect(raw.samples).toHaveLength(120);
    await sql`delete from tunnel_samples where tunnel_id = ${id}::uuid`.execute(g.database.db);
  });

  it("refuses an empty, reversed or too long range, and unknown tunnels", async () => {
    const { devices } = await g.fleet(2, { connect: false, queueConfig: false });
    const { id } = await g.tunnel(devices[0]!, devices[1]!, { queue: false });
    const get = (query: Record<string, string>) =>
      api.call<{ code: string; details: { path: string }[] }>("GET", `/api/tunnels/${id}/stats`, { query });
    const reversed = await get({ from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" });
    expect(reversed.status).toBe(400);
    expect(reversed.body.details[0]?.path).toBe("from");
    const long = await get({ from: "2026-01-01T00:00:00Z", to: "2026-03-01T00:00:00Z" });
    expect(long.status).toBe(400);
    expect((await get({ from: "yesterday" })).status).toBe(400);
    expect((await get({ maxPoints: "5" })).status).toBe(400);
    const unknown = await api.call("GET", "/api/tunnels/00000000-0000-4000-8000-000000000000/stats");
    expect(unknown.status).toBe(404);
  });
});
