/**
 * Raw probe counts (issue 17): the window span and the cumulative sent /
 * received counters an agent reports with each tunnel's figures are stored
 * with every sample, so loss over any period can be recomputed; reports
 * without them (earlier agents) still ingest.
 */
import { describe, expect, it } from "vitest";
import { lossFromCounters, lossOverPeriod } from "../../src/services/tunnels/loss/loss-over-period.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer({ TERN_INGEST_FLUSH_MS: "100" });

describe("loss counts", () => {
  it("stores window and counters with each sample and recomputes loss over any period from them", async () => {
    const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
    const t = await g.tunnel(devices[0]!, devices[1]!);
    await g.waitForJobs(t.jobIds, "complete");
    await waitUntil(
      () => fleet.devices.every((d) => d.tunnels.length === 1),
      (ok) => ok,
    );
    const a = fleet.device(0);
    const from = new Date(Date.now() - 1000);
    // Readings of the agent's counters: 300 probes a minute, 3 % then 10 % lost, then a restart (counters from 0).
    const readings = [
      { sent: 1000, received: 980 },
      { sent: 1300, received: 1271 }, // +300, 9 lost
      { sent: 1600, received: 1541 }, // +300, 30 lost
      { sent: 150, received: 148 }, // restarted: not counted across
      { sent: 450, received: 442 }, // +300, 6 lost
    ];
    const db = g.database.db;
    const count = async () =>
      (await db.selectFrom("tunnel_samples").select("sent").where("tunnel_id", "=", t.id).where("side", "=", "a").execute())
        .length;
    for (const [i, r] of readings.entries()) {
      a.setTunnelMetrics({
        loss: ((r.sent - r.received) / r.sent) * 100,
        counts: { samples: 300, windowMs: 60_000, ...r },
      });
      a.sendStatus();
      // One at a time, so each reading gets its own time stamp in order.
      await waitUntil(count, (n) => n === i + 1);
    }
    const rows = await db
      .selectFrom("tunnel_samples")
      .select(["window_ms", "sent", "received", "samples"])
      .where("tunnel_id", "=", t.id)
      .where("side", "=", "a")
      .orderBy("at")
      .execute();
    expect(rows.map((r) => [r.window_ms, Number(r.sent), Number(r.received), r.samples])).toEqual(
      readings.map((r) => [60_000, r.sent, r.received, 300]),
    );
    // The batched writer commits the samples and the latest values in two transactions (ingest-buffer.ts): the
    // last sample can be in the table a moment before its latest value.
    const latest = await waitUntil(
      () =>
        db
          .selectFrom("tunnel_latest")
          .selectAll()
          .where("tunnel_id", "=", t.id)
          .where("side", "=", "a")
          .executeTakeFirstOrThrow(),
      (l) => Number(l.sent) === 450,
    );
    expect([Number(latest.sent), Number(latest.received), latest.window_ms]).toEqual([450, 442, 60_000]);
    // The API shows each end's loss with its window and sample count.
    const api = await g.api();
    const shown = await api.call<{ quality: { a: { loss: number; samples: number; windowMs: number | null } | null } }>(
      "GET",
      `/api/tunnels/${t.id}`,
    );
    expect(shown.body.quality.a).toMatchObject({ samples: 300, windowMs: 60_000 });

    const all = await lossOverPeriod(db, g.org.id, t.id, "a", { from, to: new Date() });
    expect(all).toEqual({ sent: 900, lost: 45, lossPercent: 5, resets: 1 });
    // Another organization's view of the tunnel is empty.
    expect(await lossOverPeriod(db, "00000000-0000-4000-8000-000000000000", t.id, "a", { from, to: new Date() })).toEqual({
      sent: 0,
      lost: 0,
      lossPercent: null,
      resets: 0,
    });

    // An earlier agent's report (no counts) and an inconsistent pair are stored without counters, and skipped.
    a.setTunnelMetrics({ loss: 1 });
    a.sendStatus();
    await waitUntil(count, (n) => n === 6);
    a.setTunnelMetrics({ loss: 1, counts: { samples: 300, windowMs: 60_000, sent: 10, received: 11 } });
    a.sendStatus();
    await waitUntil(count, (n) => n === 7);
    const tail = await db
      .selectFrom("tunnel_samples")
      .select(["sent", "received"])
      .where("tunnel_id", "=", t.id)
      .where("side", "=", "a")
      .orderBy("at", "desc")
      .limit(2)
      .execute();
    expect(tail).toEqual([
      { sent: null, received: null },
      { sent: null, received: null },
    ]);
    expect(await lossOverPeriod(db, g.org.id, t.id, "a", { from, to: new Date() })).toEqual(all);
  });
});

describe("lossFromCounters", () => {
  it("sums differences, skips a reset, and says nothing without two readings", () => {
    expect(lossFromCounters([])).toEqual({ sent: 0, lost: 0, lossPercent: null, resets: 0 });
    expect(lossFromCounters([{ sent: 5, received: 5 }])).toMatchObject({ sent: 0, lossPercent: null });
    expect(
      lossFromCounters([
        { sent: 100, received: 90 },
        { sent: 200, received: 170 },
        { sent: 50, received: 50 },
        { sent: 150, received: 140 },
      ]),
    ).toEqual({ sent: 200, lost: 30, lossPercent: 15, resets: 1 });
  });
});
