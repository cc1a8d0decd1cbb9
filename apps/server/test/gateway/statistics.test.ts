/**
 * Statistics history from real status messages: the gateway's status handler
 * hands each status to the statistics writer, which writes raw interface
 * rows (counter deltas over the seconds between reports) and health rows.
 * The simulator's counters grow at 100 bytes/s × (port + 2) received.
 */
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer({ TERN_STATS_RAW_INTERVAL_MS: "1000" });

describe("statistics from status messages", () => {
  it("writes interface deltas and health once a raw interval has passed", async () => {
    const { fleet, devices } = await g.fleet(1, { statusIntervalMs: 3_600_000 });
    const d = fleet.device(0);
    const deviceId = devices[0]!.id;
    for (let i = 0; i < 3; i++) {
      d.sendStatus();
      await new Promise((r) => setTimeout(r, 1100));
    }
    d.sendStatus();
    const rows = await waitUntil(
      () => g.database.db.selectFrom("stat_if_raw").selectAll().where("device_id", "=", deviceId).execute(),
      (r) => r.length >= 4,
    );
    expect(new Set(rows.map((r) => r.organization_id))).toEqual(new Set([g.org.id]));
    const wan = rows.filter((r) => r.interface === rows[0]!.interface);
    const seconds = wan.reduce((s, r) => s + r.seconds, 0);
    const rx = wan.reduce((s, r) => s + Number(r.rx_bytes), 0);
    // The simulator's first port: 200 bytes/s received (timers and the server's receive times add jitter).
    expect(rx / seconds).toBeGreaterThan(150);
    expect(rx / seconds).toBeLessThan(250);
    const health = await g.database.db.selectFrom("stat_health_raw").selectAll().where("device_id", "=", deviceId).execute();
    expect(health.length).toBeGreaterThan(0);
    expect(health[0]).toMatchObject({ cpu: 3, memory: 21, disk: 40 });
  });
});
