/**
 * Status ingestion: the latest state per device, tunnel samples written in
 * batches with the side of each report, the latest value per tunnel end,
 * retention, and the rate limit of public address changes.
 */
import { randomUUID } from "node:crypto";
import type { InterfaceState } from "@tern/protocol";
import pino from "pino";
import { describe, expect, it, onTestFinished } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { IngestBuffer, type SampleRow, type StateRow } from "../../src/gateway/live-state/ingest-buffer.ts";
import { readDeviceLiveState, readTunnelLatest, readTunnelSamples } from "../../src/gateway/live-state/readers.ts";
import { createServerMetrics } from "../../src/metrics/server-metrics.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";

// Long enough that reports 1–4 fall in one window even on a busy machine.
const WINDOW_MS = 5000;
const g = useGatewayServer({
  TERN_PUBLIC_ADDRESS_MAX_CHANGES: "3",
  TERN_PUBLIC_ADDRESS_WINDOW_MS: String(WINDOW_MS),
  TERN_INGEST_FLUSH_MS: "200",
});

/** A connected fleet with a chain of tunnels 0–1, 1–2, … configured on the devices. */
async function tunnelledFleet(count: number, publicAddresses = false) {
  // No periodic status: each test sends the ones it counts.
  const { fleet, devices } = await g.fleet(count, { publicAddresses, statusIntervalMs: 3_600_000 });
  const tunnels: string[] = [];
  const jobIds: string[] = [];
  for (let i = 0; i + 1 < count; i++) {
    const t = await g.tunnel(devices[i]!, devices[i + 1]!);
    tunnels.push(t.id);
    jobIds.push(...t.jobIds);
  }
  await g.waitForJobs(jobIds, "complete");
  await waitUntil(
    () => fleet.devices.every((d, i) => d.tunnels.length === (i === 0 || i === count - 1 ? 1 : 2)),
    (ok) => ok,
  );
  return { fleet, devices, tunnels };
}

describe("status ingestion", () => {
  it("stores device states and latest values exactly as reported (JSON with quotes, backslashes, non-ASCII; nulls kept)", async () => {
    // The tunnel below is made up: the orphan sweep, which deletes the latest values of tunnels that do not
    // exist, would race the reads. Paused for this test.
    await g.server.gateway.duties.stop();
    onTestFinished(() => g.server.gateway.duties.start());
    const { devices } = await g.fleet(2, { connect: false });
    const [one, two] = [devices[0]!.id, devices[1]!.id];
    const iface = (name: string): InterfaceState => ({
      devId: "pci:0000:00:03.0",
      name,
      operState: "up",
      IPv4: "10.0.0.2",
      IPv4Mask: 24,
      gateway: "10.0.0.1",
      mac: "02:00:00:00:00:01",
      mtu: 1500,
      rxBytes: 2 ** 40 + 1,
      txBytes: 0,
      publicIp: "",
      publicPort: null,
      lte: null,
    });
    const reportedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000 + 123);
    const bare = (deviceId: string): StateRow => ({
      deviceId,
      orgId: g.org.id,
      reportedAt,
      appliedHash: null,
      applying: false,
      interfaces: [],
      bgp: null,
      vrrp: [],
      health: null,
    });
    const states: StateRow[] = [
      {
        deviceId: one,
        orgId: g.org.id,
        reportedAt,
        appliedHash: 'h"1\\',
        applying: true,
        interfaces: [iface('wan "0" \\ ünï ✓\n'), iface("lan0")],
        bgp: { running: true, routerId: "1.1.1.1", localASN: 65001, neighbors: [] },
        vrrp: [{ groupId: randomUUID(), state: "MASTER", since: reportedAt.toISOString() }],
        health: { uptimeSeconds: 12.5, cpuPercent: 0.1 + 0.2, memoryPercent: 50, diskPercent: 1, temperatureC: null },
      },
      bare(two),
      // A device that does not exist: its state is skipped.
      bare(randomUUID()),
    ];
    const tunnelId = randomUUID();
    const sample = (i: number, side: "a" | "b"): SampleRow => ({
      tunnelId,
      deviceId: side === "a" ? one : two,
      side,
      at: new Date(reportedAt.getTime() + i * 1000),
      up: i % 2 === 0,
      loss: 100 / 3,
      rtt: i === 2 ? 1e-7 : 12.5,
      jitter: 0.1 + 0.2,
      samples: 30 + i,
      windowMs: side === "b" ? null : 30_000,
      sent: side === "b" ? null : 2 ** 40 + i,
      received: side === "b" ? null : 2 ** 40,
    });
    const written: number[] = [];
    const buffer = new IngestBuffer(
      g.database.db,
      createServerMetrics(),
      pino({ level: "silent" }),
      { batchRows: 1000, flushMs: 60_000, maxBuffered: 10_000 },
      (w) => written.push(w.states.length),
    );
    buffer.add(states[0]!, [sample(0, "a"), sample(1, "b")]);
    buffer.add(states[1]!, [sample(2, "a"), sample(3, "b")]);
    buffer.add(states[2]!, []);
    await buffer.flush();
    expect(written).toEqual([3]);

    const stored = await g.database.db
      .selectFrom("device_state")
      .select(["device_id", "organization_id", "reported_at", "applied_hash", "applying", "interfaces", "bgp", "vrrp", "health"])
      .where(
        "device_id",
        "in",
        states.map((s) => s.deviceId),
      )
      .orderBy("applying", "desc")
      .execute();
    expect(stored).toEqual(
      states.slice(0, 2).map((s) => ({
        device_id: s.deviceId,
        organization_id: s.orgId,
        reported_at: s.reportedAt,
        applied_hash: s.appliedHash,
        applying: s.applying,
        interfaces: s.interfaces,
        bgp: s.bgp,
        vrrp: s.vrrp,
        health: s.health,
      })),
    );
    // The latest value per end is the newest sample of that end, every column as sent (reals as PostgreSQL stores them).
    const f32 = (x: number) => Math.fround(x);
    const rows = await g.database.db
      .selectFrom("tunnel_latest")
      .selectAll()
      .where("tunnel_id", "=", tunnelId)
      .orderBy("side")
      .execute();
    expect(
      rows.map((r) => [
        r.side,
        r.device_id,
        r.at,
        r.up,
        r.loss,
        r.rtt,
        r.jitter,
        r.samples,
        r.window_ms,
        r.sent === null ? null : Number(r.sent),
        r.received === null ? null : Number(r.received),
      ]),
    ).toEqual([
      [
        "a",
        one,
        sample(2, "a").at,
        true,
        expect.closeTo(f32(100 / 3), 5),
        expect.closeTo(1e-7, 12),
        expect.closeTo(f32(0.3), 6),
        32,
        30_000,
        2 ** 40 + 2,
        2 ** 40,
      ],
      [
        "b",
        two,
        sample(3, "b").at,
        false,
        expect.closeTo(f32(100 / 3), 5),
        12.5,
        expect.closeTo(f32(0.3), 6),
        33,
        null,
        null,
        null,
      ],
    ]);
  });

  it("keeps the latest state per device and per tunnel end, and writes every sample", async () => {
    const { fleet, devices, tunnels } = await tunnelledFleet(2, true);
    const [a, b] = [fleet.device(0), fleet.device(1)];
    a.setTunnelMetrics({ loss: 1, rtt: 11, jitter: 2 });
    b.setTunnelMetrics({ loss: 0, rtt: 12, jitter: 3, up: true });
    a.sendStatus();
    b.sendStatus();
    a.setTunnelMetrics({ loss: 5, rtt: 55, jitter: 4 });
    a.sendStatus();
    const tunnel = tunnels[0]!;
    const latest = await waitUntil(
      () => readTunnelLatest(g.database.db, g.org.id, [tunnel]),
      (m) => m.get(tunnel)?.a?.rtt === 55 && m.get(tunnel)?.b !== null,
    );
    expect(latest.get(tunnel)).toEqual({
      a: expect.objectContaining({ deviceId: devices[0]!.id, up: true, loss: 5, rtt: 55, jitter: 4, samples: 30 }),
      b: expect.objectContaining({ deviceId: devices[1]!.id, up: true, loss: 0, rtt: 12, jitter: 3 }),
    });
    const samples = await readTunnelSamples(g.database.db, g.org.id, tunnel, {
      from: new Date(Date.now() - 60_000),
      to: new Date(),
    });
    expect(samples.filter((s) => s.side === "a").map((s) => s.rtt)).toEqual(expect.arrayContaining([11, 55]));
    expect(samples.filter((s) => s.side === "b").map((s) => s.rtt)).toContain(12);
    // Another organization sees nothing of it.
    expect(await readTunnelSamples(g.database.db, randomUUID(), tunnel, { from: new Date(0), to: new Date() })).toEqual([]);

    // The public address in that first status re-configured the devices: once that settled, one more status.
    await waitUntil(
      () => readDeviceLiveState(g.database.db, g.org.id, devices[0]!.id),
      (s) => !!s?.reported && s.appliedHash === s.desiredHash,
    );
    a.sendStatus();
    const state = await waitUntil(
      () => readDeviceLiveState(g.database.db, g.org.id, devices[0]!.id),
      (s) => !!s?.reported && s.appliedHash === s.desiredHash && s.reported.appliedHash === s.desiredHash,
    );
    expect(state).toMatchObject({ connection: "connected", appliedHash: a.appliedHash, desiredHash: a.appliedHash });
    expect(state!.reported!.interfaces.map((i) => i.name)).toEqual(["eth0", "eth1"]);
    expect(state!.reported!.interfaces[0]!.publicIp).toMatch(/^198\./);
    expect(state!.reported!.health).toMatchObject({ cpuPercent: 3, memoryPercent: 21 });
    expect(
      (await g.database.db.selectFrom("devices").select("interfaces").where("id", "=", devices[0]!.id).executeTakeFirstOrThrow())
        .interfaces[0]!.PublicIP,
    ).toMatch(/^198\./);
  });

  it("writes samples in batches, not one statement per status", async () => {
    const { fleet, tunnels } = await tunnelledFleet(6);
    const buffer = g.server.gateway.ingest;
    // `recent` keeps the last 100 flushes: emptied here, so earlier tests' flushes cannot fill it (a full ring
    // would show this test's flushes as none).
    buffer.recent.splice(0);
    const rounds = 10;
    for (let r = 0; r < rounds; r++) for (const d of fleet.devices) d.sendStatus();
    const expected = rounds * tunnels.length * 2;
    const rows = await waitUntil(
      async () =>
        Number(
          (
            await g.database.db
              .selectFrom("tunnel_samples")
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .where("tunnel_id", "in", tunnels)
              .executeTakeFirstOrThrow()
          ).n,
        ),
      (n) => n >= expected,
    );
    expect(rows).toBe(expected);
    // The rows can be visible (committed) a moment before the writer records its flush: wait for the records.
    const flushes = await waitUntil(
      async () => [...buffer.recent],
      (f) => f.reduce((sum, x) => sum + x.samples, 0) >= expected,
    );
    const statuses = rounds * fleet.size;
    expect(flushes.length).toBeLessThan(statuses / 5);
    expect(Math.max(...flushes.map((f) => f.samples))).toBeGreaterThan(10);
    console.log(
      `ingest: ${statuses} statuses, ${expected} samples in ${flushes.length} batches (max ${Math.max(...flushes.map((f) => f.samples))} samples, ${Math.max(...flushes.map((f) => f.ms)).toFixed(1)} ms)`,
    );
  });
});

describe("public address changes", () => {
  const wan = async (d: SimRow) => {
    const row = await g.database.db.selectFrom("devices").select("interfaces").where("id", "=", d.id).executeTakeFirstOrThrow();
    return row.interfaces[0]!;
  };
  const jobCount = async (ids: string[]) =>
    Number(
      (
        await g.database.db
          .selectFrom("jobs")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("device_id", "in", ids)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("applies a new public address, re-configuring both ends, and throttles one that changes too often", async () => {
    const events: GatewayEventMap["public-address-rate-limit"][] = [];
    const off = g.server.deps.deviceLink.events.on("public-address-rate-limit", (e) => events.push(e));
    const { fleet, devices } = await tunnelledFleet(2);
    const [d, far] = [devices[0]!, devices[1]!];
    const sim = fleet.device(0);
    const ids = [d.id, far.id];

    const report = async (n: number) => {
      sim.setPublicAddress({ publicIp: `203.0.113.${n}`, publicPort: 4500 + n });
      sim.sendStatus();
    };
    // The first report of an address counts as a change: 1, 2, 3 are applied (the limit is 3 per window).
    await report(1);
    await waitUntil(
      () => wan(d),
      (w) => w.PublicIP === "203.0.113.1",
    );
    expect((await wan(d)).PublicPort).toBe("4501");
    // The far end dials the new public address: its config changed, so it got a job.
    const farJobs = await g.database.db
      .selectFrom("jobs")
      .select(["tasks"])
      .where("device_id", "=", far.id)
      .orderBy("created_at", "desc")
      .execute();
    expect(farJobs[0]!.tasks[0]).toMatchObject({ kind: "public-address" });
    await report(2);
    await report(3);
    await waitUntil(
      () => wan(d),
      (w) => w.PublicIP === "203.0.113.3",
    );
    const jobsAfterThree = await jobCount(ids);

    await report(4);
    await waitUntil(
      () => wan(d),
      (w) => w.isPublicAddressRateLimited,
    );
    expect((await wan(d)).PublicIP).toBe("203.0.113.3");
    await report(5);
    await new Promise((r) => setTimeout(r, 300));
    expect((await wan(d)).PublicIP).toBe("203.0.113.3");
    expect(await jobCount(ids)).toBe(jobsAfterThree);
    expect(events).toContainEqual(expect.objectContaining({ deviceId: d.id, devId: "pci:0000:00:03.0", limited: true }));

    // Calm for a window: the next report lifts the limit and applies the address it has now.
    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));
    sim.sendStatus();
    const lifted = await waitUntil(
      () => wan(d),
      (w) => !w.isPublicAddressRateLimited,
    );
    expect(lifted.PublicIP).toBe("203.0.113.5");
    expect(await jobCount(ids)).toBeGreaterThan(jobsAfterThree);
    expect(events).toContainEqual(expect.objectContaining({ deviceId: d.id, limited: false }));
    const stored = await g.database.db
      .selectFrom("device_state")
      .select("public_addresses")
      .where("device_id", "=", d.id)
      .executeTakeFirstOrThrow();
    expect(stored.public_addresses["pci:0000:00:03.0"]).toMatchObject({ publicIp: "203.0.113.5", limited: false });
    const metrics = await (await fetch(`${g.server.url}/metrics`)).text();
    expect(metrics).toMatch(/tern_public_address_changes_total\{outcome="throttled"\} [1-9]/);
    off();
  });
});
