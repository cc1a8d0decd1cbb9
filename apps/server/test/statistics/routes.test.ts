/**
 * The statistics routes: GET /api/devices/{id}/statistics, /api/tunnels/{id}/stats
 * with a step, /api/organizations/{id}/statistics/top-talkers and /worst-tunnels.
 * Tier choice by step (each tier seeded with different figures for the same
 * hour, so the answer shows which one was read), rates, bad ranges and steps
 * (400 with the statistics codes), and each route's tenancy and permissions.
 */
import { randomUUID } from "node:crypto";
import type { DeviceStatistics, TopTalkers, TunnelStats, WorstTunnels } from "@tern/protocol";
import { DeviceStatistics as DeviceStatisticsSchema } from "@tern/protocol";
import { sql } from "kysely";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "../../src/services/statistics/partitions.ts";
import { rollUpMinutes } from "../../src/services/statistics/rollup.ts";
import { DAY_MS, HOUR_MS } from "../../src/services/statistics/settings.ts";
import { insertInterfaceRows, StatisticsWriter } from "../../src/services/statistics/writer.ts";
import { insertTestTunnel, insertValidDevice } from "../support/device-fixtures.ts";
import type { TestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();
type ErrorBody = { code: string; details: { path: string }[] };

const HOUR = Math.floor((Date.now() - 3 * HOUR_MS) / HOUR_MS) * HOUR_MS; // a whole hour 2–3 hours ago
const iso = (ms: number) => new Date(ms).toISOString();
let device: TestDevice;
let quiet: TestDevice;

const counters = (rx: number, tx: number) => ({
  rxBytes: rx,
  txBytes: tx,
  rxPackets: Math.floor(rx / 100),
  txPackets: Math.floor(tx / 100),
  rxErrors: 0,
  txErrors: null,
  rxDrops: 1,
  txDrops: null,
});

async function rollupRow(table: "stat_if_1m" | "stat_if_1h", deviceId: string, bucket: number, rx: number, seconds: number) {
  await t.database.db
    .insertInto(table)
    .values({
      bucket: new Date(bucket),
      organization_id: t.admin.orgId,
      device_id: deviceId,
      interface: "wan",
      samples: 1,
      seconds,
      ...Object.fromEntries(
        Object.entries(counters(rx, rx / 2)).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
      ),
    } as never)
    .execute();
}

beforeAll(async () => {
  const db = t.database.db;
  await ensurePartitions(db, Date.now(), Date.now() - 10 * DAY_MS);
  device = await insertValidDevice(t, { name: "talker" });
  quiet = await insertValidDevice(t, { name: "quiet" });
  // The same hour in each tier, with different figures: 1h says 3.6 MB, the minutes 7.2 MB, raw 36 KB.
  await rollupRow("stat_if_1h", device.id, HOUR, 3_600_000, 3600);
  for (let m = 0; m < 60; m++) await rollupRow("stat_if_1m", device.id, HOUR + m * 60_000, 120_000, 60);
  await insertInterfaceRows(
    db,
    Array.from({ length: 120 }, (_, i) => ({
      at: new Date(HOUR + (i + 1) * 30_000 - 1),
      orgId: t.admin.orgId,
      deviceId: device.id,
      interface: "wan",
      seconds: 30,
      counters: counters(300, 150),
    })),
  );
  await insertInterfaceRows(db, [
    {
      at: new Date(HOUR + 1000),
      orgId: t.admin.orgId,
      deviceId: quiet.id,
      interface: "wan",
      seconds: 30,
      counters: counters(10, 10),
    },
  ]);
  await rollupRow("stat_if_1h", quiet.id, HOUR, 1000, 3600);
  await rollupRow("stat_if_1m", quiet.id, HOUR, 1000, 60);
  // Roll-ups are done up to now: each tier answers for its own part.
  const now = new Date();
  await db
    .insertInto("stat_rollup_progress")
    .values([
      { name: "minute", done_until: new Date(Math.floor(now.getTime() / 60_000) * 60_000) },
      { name: "hour", done_until: new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS) },
    ])
    .execute();
  // Health and a BGP change through the writer (raw tier).
  const w = new StatisticsWriter(db, { rawIntervalMs: 10_000 }, pino({ level: "silent" }));
  for (let s = 0; s <= 20; s += 5)
    w.record(
      { deviceId: device.id, orgId: t.admin.orgId },
      {
        interfaces: [],
        health: { uptimeSeconds: 100 + s, cpuPercent: s, memoryPercent: 50, diskPercent: 10, temperatureC: null },
        bgp: {
          running: true,
          routerId: "1.1.1.1",
          localASN: 65000,
          neighbors: [
            {
              ip: "10.0.0.2",
              remoteASN: 65001,
              state: s < 10 ? "Active" : "Established",
              uptimeSeconds: 0,
              prefixesReceived: 0,
              prefixesSent: 0,
            },
          ],
        },
        vrrp: [],
      },
      new Date(HOUR + 10 * 60_000 + s * 1000),
    );
  await w.flush();
});

const get = <T>(path: string, token = t.admin.token) => t.api<T>("GET", path, { token });

describe("GET /api/devices/{id}/statistics", () => {
  const range = `from=${iso(HOUR)}&to=${iso(HOUR + HOUR_MS)}`;

  it("the step picks the tier: raw below a minute, 1-minute roll-ups below an hour, 1-hour roll-ups from an hour", async () => {
    const total = (body: DeviceStatistics) => body.interfaces[0]!.points.reduce((sum, p) => sum + p.rxBytes, 0);
    const raw = await get<DeviceStatistics>(`/api/devices/${device.id}/statistics?${range}&step=30`);
    expect(raw.status).toBe(200);
    expect(DeviceStatisticsSchema.safeParse(raw.body).success).toBe(true);
    expect([raw.body.tier, raw.body.stepSeconds, total(raw.body)]).toEqual(["raw", 30, 36_000]);
    expect(raw.body.interfaces[0]!.points).toHaveLength(120);
    // 300 bytes and 3 packets in 30 s.
    expect(raw.body.interfaces[0]!.points[0]).toMatchObject({
      rxBps: 80,
      txBps: 40,
      rxPps: 0.1,
      rxErrors: 0,
      txErrors: null,
      rxDrops: 1,
    });

    const minute = await get<DeviceStatistics>(`/api/devices/${device.id}/statistics?${range}&step=300`);
    expect([minute.body.tier, minute.body.interfaces[0]!.points.length, total(minute.body)]).toEqual(["1m", 12, 7_200_000]);
    // Re-bucketed: five 1-minute rows of 120 KB over 300 s.
    expect(minute.body.interfaces[0]!.points[0]).toMatchObject({ rxBytes: 600_000, rxBps: 16_000 });

    const hour = await get<DeviceStatistics>(`/api/devices/${device.id}/statistics?${range}&step=3600`);
    expect([hour.body.tier, hour.body.interfaces[0]!.points.length, total(hour.body)]).toEqual(["1h", 1, 3_600_000]);
    expect(hour.body.interfaces[0]!.points[0]).toMatchObject({ at: iso(HOUR), rxBps: 8000 });
  });

  it("carries health means and the BGP session's state changes", async () => {
    const res = await get<DeviceStatistics>(`/api/devices/${device.id}/statistics?${range}&step=30`);
    expect(res.status).toBe(200);
    expect(res.body.health.length).toBeGreaterThan(0);
    expect(res.body.health.some((h) => h.cpuMaxPercent >= 10 && h.memoryPercent === 50)).toBe(true);
    expect(res.body.stateChanges.map((c) => [c.kind, c.key, c.from, c.to])).toEqual([
      ["bgp", "10.0.0.2", null, "Active"],
      ["bgp", "10.0.0.2", "Active", "Established"],
    ]);
  });

  it("without a step, picks one giving at most 500 points; the range start is rounded down to it", async () => {
    const res = await get<DeviceStatistics>(
      `/api/devices/${device.id}/statistics?from=${iso(HOUR + 7000)}&to=${iso(HOUR + HOUR_MS)}`,
    );
    expect(res.status).toBe(200);
    expect([res.body.stepSeconds, res.body.tier, res.body.from]).toEqual([10, "raw", iso(HOUR)]);
    const week = await get<DeviceStatistics>(
      `/api/devices/${device.id}/statistics?from=${iso(Date.now() - 7 * DAY_MS + HOUR_MS)}`,
    );
    expect([week.body.stepSeconds, week.body.tier]).toEqual([3600, "1h"]);
  });

  it("refuses bad ranges and steps with their codes", async () => {
    const cases: [string, string, string][] = [
      [`from=${iso(HOUR + HOUR_MS)}&to=${iso(HOUR)}`, "STATISTICS_RANGE_INVALID", "from"],
      [`from=${iso(Date.now() - 100 * DAY_MS)}`, "STATISTICS_RANGE_INVALID", "from"],
      [`to=${iso(Date.now() + DAY_MS)}`, "STATISTICS_RANGE_INVALID", "to"],
      [`${range}&step=90`, "STATISTICS_STEP_INVALID", "step"],
      [`${range}&step=5400`, "STATISTICS_STEP_INVALID", "step"],
      // The raw tier keeps 24 hours, the minute tier 7 days.
      [`from=${iso(Date.now() - 2 * DAY_MS)}&step=30`, "STATISTICS_STEP_INVALID", "step"],
      [`from=${iso(Date.now() - 8 * DAY_MS)}&step=60`, "STATISTICS_STEP_INVALID", "step"],
      [`from=${iso(Date.now() - 23 * HOUR_MS)}&step=1`, "STATISTICS_STEP_INVALID", "step"],
      [`${range}&step=0`, "VALIDATION_FAILED", "step"],
      [`${range}&points=3`, "VALIDATION_FAILED", "points"],
      ["from=yesterday", "VALIDATION_FAILED", "from"],
    ];
    for (const [query, code, path] of cases) {
      const res = await get<ErrorBody>(`/api/devices/${device.id}/statistics?${query}`);
      expect([query, res.status, res.body.code]).toEqual([query, 400, code]);
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
  });

  it("is tenant-scoped and needs the devices read permission", async () => {
    const other = await t.createTenant(`stats-${randomUUID()}`);
    expect((await get<ErrorBody>(`/api/devices/${device.id}/statistics`, other.token)).body.code).toBe("NOT_FOUND");
    expect((await get(`/api/devices/${device.id}/statistics`, "")).status).toBe(401);
    const viewer = await t.addMember("viewer");
    expect((await get(`/api/devices/${device.id}/statistics?${range}`, viewer.token)).status).toBe(200);
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: `no-devices-${randomUUID()}`, role: "viewer", permissions: { devices: 0 } },
    });
    expect(key.status).toBe(201);
    const refused = await get<ErrorBody>(`/api/devices/${device.id}/statistics?${range}`, key.body.token);
    expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"]);
  });
});

describe("GET /api/tunnels/{id}/stats with a step", () => {
  it("reads the tier the step picks; without a step the answer is as before", async () => {
    const other = await insertValidDevice(t);
    const tunnel = await insertTestTunnel(t, device, other);
    const db = t.database.db;
    const at = Math.floor((Date.now() - 20 * 60_000) / 30_000) * 30_000;
    await db
      .insertInto("tunnel_samples")
      .values(
        [0, 10_000, 20_000].map((d, i) => ({
          tunnel_id: tunnel.id,
          device_id: device.id,
          side: "a" as const,
          at: new Date(at + d),
          up: i !== 1,
          loss: i * 3,
          rtt: 10 + i,
          jitter: 1,
          samples: 10,
        })),
      )
      .execute();
    const minute = Math.floor(at / 60_000) * 60_000;
    // A 1-hour roll-up of an earlier day (beyond the raw samples) with its own figures.
    await db
      .insertInto("stat_tunnel_1h")
      .values({
        bucket: new Date(HOUR - DAY_MS),
        organization_id: t.admin.orgId,
        tunnel_id: tunnel.id,
        side: "b",
        samples: 4,
        up_samples: 4,
        loss_sum: 2,
        loss_max: 1,
        rtt_sum: 200,
        rtt_max: 60,
        jitter_sum: 8,
        jitter_max: 3,
      })
      .execute();

    const raw = await get<TunnelStats>(`/api/tunnels/${tunnel.id}/stats?from=${iso(at)}&to=${iso(at + 60_000)}&step=30`);
    expect(raw.status).toBe(200);
    expect([raw.body.tier, raw.body.bucketSeconds]).toEqual(["raw", 30]);
    expect(raw.body.samples).toEqual([{ at: iso(at), side: "a", loss: 3, rtt: 11, jitter: 1, up: false }]);
    // The minute tier (rolled up, as the mark says) is what step=60 reads: its own row for that minute.
    await db
      .insertInto("stat_tunnel_1m")
      .values({
        bucket: new Date(minute),
        organization_id: t.admin.orgId,
        tunnel_id: tunnel.id,
        side: "a",
        samples: 2,
        up_samples: 2,
        loss_sum: 1,
        loss_max: 1,
        rtt_sum: 30,
        rtt_max: 20,
        jitter_sum: 2,
        jitter_max: 1,
      })
      .execute();
    const byMinute = await get<TunnelStats>(
      `/api/tunnels/${tunnel.id}/stats?from=${iso(minute)}&to=${iso(minute + 60_000)}&step=60`,
    );
    expect([byMinute.body.tier, byMinute.body.samples]).toEqual([
      "1m",
      [{ at: iso(minute), side: "a", loss: 0.5, rtt: 15, jitter: 1, up: true }],
    ]);
    const hour = await get<TunnelStats>(
      `/api/tunnels/${tunnel.id}/stats?from=${iso(HOUR - DAY_MS)}&to=${iso(HOUR - DAY_MS + HOUR_MS)}&step=3600`,
    );
    expect([hour.body.tier, hour.body.samples]).toEqual([
      "1h",
      [{ at: iso(HOUR - DAY_MS), side: "b", loss: 0.5, rtt: 50, jitter: 2, up: true }],
    ]);
    const plain = await get<TunnelStats>(`/api/tunnels/${tunnel.id}/stats?from=${iso(at - 1000)}&to=${iso(at + 30_000)}`);
    expect(plain.body.tier).toBeUndefined();
    expect(plain.body.samples.map((s) => s.loss)).toEqual([0, 3, 6]);
    const bad = await get<ErrorBody>(`/api/tunnels/${tunnel.id}/stats?from=${iso(Date.now() - 8 * DAY_MS)}&step=30`);
    expect([bad.status, bad.body.code]).toEqual([400, "STATISTICS_STEP_INVALID"]);
  });
});

describe("organization aggregates", () => {
  const range = `from=${iso(HOUR)}&to=${iso(HOUR + HOUR_MS)}`;

  it("top talkers rank devices (or interfaces) by bytes; 1-minute tier below 6 hours, 1-hour tier above", async () => {
    const res = await get<TopTalkers>(`/api/organizations/${t.admin.orgId}/statistics/top-talkers?${range}`);
    expect(res.status).toBe(200);
    expect(res.body.tier).toBe("1m");
    expect(res.body.items.map((i) => [i.deviceName, i.interface, i.rxBytes])).toEqual([
      ["talker", null, 7_200_000],
      ["quiet", null, 1000],
    ]);
    const day = await get<TopTalkers>(
      `/api/organizations/${t.admin.orgId}/statistics/top-talkers?from=${iso(HOUR - 5 * HOUR_MS)}&to=${iso(HOUR + HOUR_MS)}&by=interface&limit=1`,
    );
    expect(day.body.tier).toBe("1h");
    // From the hour tier, the range ends with the last rolled-up hour.
    expect(Date.parse(day.body.to)).toBeLessThanOrEqual(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    expect(day.body.items.map((i) => [i.deviceId, i.interface, i.rxBytes, i.totalBytes])).toEqual([
      [device.id, "wan", 3_600_000, 5_400_000],
    ]);
  });

  it("worst tunnels rank by mean loss, RTT or jitter of both ends", async () => {
    const a = await insertValidDevice(t);
    const b = await insertValidDevice(t);
    const good = await insertTestTunnel(t, a, b);
    const bad = await insertTestTunnel(t, b, a);
    const at = new Date(Date.now() - 5 * 60_000);
    const sample = (tunnelId: string, loss: number, rtt: number) => ({
      tunnel_id: tunnelId,
      device_id: a.id,
      side: "a" as const,
      at,
      up: true,
      loss,
      rtt,
      jitter: rtt / 10,
      samples: 10,
    });
    await t.database.db
      .insertInto("tunnel_samples")
      .values([sample(good.id, 0, 90), sample(bad.id, 20, 10)])
      .execute();
    // The duty's roll-up of the last 40 minutes puts them in the minute tier the aggregate reads.
    await t.database.db
      .updateTable("stat_rollup_progress")
      .set({ done_until: new Date(Date.now() - 40 * 60_000) })
      .where("name", "=", "minute")
      .execute();
    await rollUpMinutes(t.database.db, new Date(), 0);
    const from = iso(Date.now() - 30 * 60_000);
    const byLoss = await get<WorstTunnels>(`/api/organizations/${t.admin.orgId}/statistics/worst-tunnels?from=${from}`);
    expect(byLoss.status).toBe(200);
    const mine = (items: WorstTunnels["items"]) => items.filter((i) => i.tunnelId === good.id || i.tunnelId === bad.id);
    expect(byLoss.body.tier).toBe("1m");
    expect(mine(byLoss.body.items).map((i) => [i.tunnelId, i.loss])).toEqual([
      [bad.id, 20],
      [good.id, 0],
    ]);
    const byRtt = await get<WorstTunnels>(`/api/organizations/${t.admin.orgId}/statistics/worst-tunnels?from=${from}&by=rtt`);
    expect(mine(byRtt.body.items)[0]).toMatchObject({ tunnelId: good.id, rtt: 90, upPercent: 100, samples: 1 });
    const badBy = await get<ErrorBody>(`/api/organizations/${t.admin.orgId}/statistics/worst-tunnels?by=mos`);
    expect([badBy.status, badBy.body.code]).toEqual([400, "VALIDATION_FAILED"]);
  });

  it("another organization's caller gets nothing, and the read permission of devices / tunnels is needed", async () => {
    const other = await t.createTenant(`stats-org-${randomUUID()}`);
    for (const view of ["top-talkers", "worst-tunnels"]) {
      const res = await get<ErrorBody>(`/api/organizations/${t.admin.orgId}/statistics/${view}`, other.token);
      expect([403, 404]).toContain(res.status);
      const own = await get<TopTalkers>(`/api/organizations/${other.orgId}/statistics/${view}?${range}`, other.token);
      expect([own.status, own.body.items]).toEqual([200, []]);
    }
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: `no-tunnels-${randomUUID()}`, role: "viewer", permissions: { tunnels: 0 } },
    });
    expect((await get(`/api/organizations/${t.admin.orgId}/statistics/worst-tunnels`, key.body.token)).status).toBe(403);
    expect((await get(`/api/organizations/${t.admin.orgId}/statistics/top-talkers?${range}`, key.body.token)).status).toBe(200);
  });
});

describe("statistics queries read only their tenant's rows", () => {
  it("a device id of another organization in the rows changes nothing", async () => {
    const rows = await sql<{
      n: string;
    }>`select count(*)::text n from stat_if_1m where organization_id <> ${t.admin.orgId}`.execute(t.database.db);
    expect(rows.rows[0]!.n).toBe("0");
  });
});
