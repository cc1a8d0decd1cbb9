/**
 * The tunnel status derivation: its rules case by case, and its SQL mirror
 * (used to filter and sort lists) agreeing with it on every combination of facts.
 */
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import {
  CONFIG_STATES,
  CONNECTIONS,
  deriveTunnelStatus,
  REPORTS,
  type TunnelEndFacts,
  type TunnelStatusFacts,
} from "../../src/services/tunnels/status.ts";
import { isPendingSql, overallStatusSql, tunnelStatusSql } from "../../src/services/tunnels/status-sql.ts";
import { useTestServer } from "../support/test-server.ts";

const ready = (name: string, reported: TunnelEndFacts["reported"] = "up"): TunnelEndFacts => ({
  deviceName: name,
  connection: "connected",
  configured: true,
  config: "applied",
  reported,
});

describe("deriveTunnelStatus", () => {
  it("Connected when both ends are connected, applied and report the tunnel up", () => {
    expect(deriveTunnelStatus({ a: ready("hq"), b: ready("branch") })).toEqual({
      tunnelStatus: "Connected",
      status: "Connected",
      tunnelStatusA: "up",
      tunnelStatusB: "up",
      isPending: false,
      pendingReason: "",
    });
  });

  it("Not Connected when configured on both but one end reports it down (or has not reported yet)", () => {
    for (const reported of ["down", "unknown"] as const) {
      const r = deriveTunnelStatus({ a: ready("hq"), b: ready("branch", reported) });
      expect(r).toMatchObject({
        tunnelStatus: "Not Connected",
        status: "Not Connected",
        tunnelStatusB: reported,
        isPending: false,
      });
    }
  });

  it("never-connected devices: N/A overall, Pending, waiting for each to connect", () => {
    const r = deriveTunnelStatus({
      a: { ...ready("hq", "unknown"), connection: "never", config: "in-flight" },
      b: { ...ready("branch", "unknown"), connection: "never", config: "in-flight" },
    });
    expect(r).toEqual({
      tunnelStatus: "Pending",
      status: "N/A",
      tunnelStatusA: "unknown",
      tunnelStatusB: "unknown",
      isPending: true,
      pendingReason: "waiting for device hq to connect; waiting for device branch to connect",
    });
  });

  it("a job in flight or failed on one end: Pending with that device named", () => {
    const inFlight = deriveTunnelStatus({ a: ready("hq"), b: { ...ready("branch"), config: "in-flight" } });
    expect(inFlight).toMatchObject({
      tunnelStatus: "Pending",
      status: "Pending",
      isPending: true,
      pendingReason: "waiting for device branch to apply configuration",
    });
    const failed = deriveTunnelStatus({ a: { ...ready("hq"), config: "failed" }, b: ready("branch") });
    expect(failed.pendingReason).toBe("waiting for device hq to apply configuration (its last configuration job failed)");
  });

  it("a tunnel the compiler left out of an end's config is Pending with that reason", () => {
    const r = deriveTunnelStatus({ a: { ...ready("hq"), configured: false }, b: ready("branch") });
    expect(r.isPending).toBe(true);
    expect(r.pendingReason).toMatch(/^device hq cannot configure the tunnel yet/);
  });

  it("a disconnected device makes the overall status N/A but is not by itself pending", () => {
    const r = deriveTunnelStatus({ a: ready("hq", "down"), b: { ...ready("branch", "down"), connection: "disconnected" } });
    expect(r).toMatchObject({ tunnelStatus: "Not Connected", status: "N/A", isPending: false });
  });

  it("a peer tunnel follows its one device end; tunnelStatusB stays unknown", () => {
    expect(deriveTunnelStatus({ a: ready("hq"), b: null })).toMatchObject({
      tunnelStatus: "Connected",
      status: "Connected",
      tunnelStatusB: "unknown",
    });
    expect(deriveTunnelStatus({ a: { ...ready("hq", "unknown"), connection: "never" }, b: null })).toMatchObject({
      tunnelStatus: "Pending",
      status: "N/A",
      pendingReason: "waiting for device hq to connect",
    });
  });
});

describe("the SQL mirror of deriveTunnelStatus", () => {
  const t = useTestServer();

  const ends: Omit<TunnelEndFacts, "deviceName">[] = [];
  for (const configured of [true, false])
    for (const connection of CONNECTIONS)
      for (const config of CONFIG_STATES) for (const reported of REPORTS) ends.push({ configured, connection, config, reported });

  it("agrees with the TypeScript derivation on every combination of facts", async () => {
    const cases: TunnelStatusFacts[] = [];
    for (const a of ends) {
      cases.push({ a: { ...a, deviceName: "a" }, b: null });
      for (const b of ends) cases.push({ a: { ...a, deviceName: "a" }, b: { ...b, deviceName: "b" } });
    }
    expect(cases.length).toBe(54 + 54 * 54);
    const lit = (v: unknown) => (v === null || v === undefined ? sql`null` : sql.lit(v as string | boolean));
    const rows = cases.map(
      (c, i) =>
        sql`(${sql.lit(i)}, ${c.b ? sql`null::uuid` : sql`gen_random_uuid()`}, ${lit(c.a.configured)}, ${lit(c.a.connection)}, ${lit(
          c.a.config,
        )}, ${lit(c.a.reported)}, ${lit(c.b?.configured)}::boolean, ${lit(c.b?.connection)}::text, ${lit(c.b?.config)}::text, ${lit(
          c.b?.reported,
        )}::text)`,
    );
    const result = await sql<{ i: number; is_pending: boolean; tunnel_status: string; status: string }>`
      select f.i, ${isPendingSql("f")} as is_pending, ${tunnelStatusSql("f")} as tunnel_status, ${overallStatusSql("f")} as status
      from (values ${sql.join(rows)}) as f(i, peer_id, a_configured, a_connection, a_config, a_reported,
        b_configured, b_connection, b_config, b_reported)
      order by f.i`.execute(t.database.db);
    expect(result.rows).toHaveLength(cases.length);
    const mismatches = result.rows.filter((row) => {
      const expected = deriveTunnelStatus(cases[row.i]!);
      return (
        row.is_pending !== expected.isPending || row.tunnel_status !== expected.tunnelStatus || row.status !== expected.status
      );
    });
    expect(mismatches.slice(0, 5).map((m) => ({ ...m, facts: cases[m.i] }))).toEqual([]);
    // Every outcome occurs, so the comparison is not vacuous.
    expect(new Set(result.rows.map((r) => r.status))).toEqual(new Set(["Connected", "Not Connected", "Pending", "N/A"]));
  });
});
