/**
 * Links that end together share transactions (gateway/link-end-batch.ts, issue 14), with the same
 * outcome as one at a time: every session gone, every device disconnected with its event, the
 * config jobs its unanswered applies left running back in the queue, and the next link takes
 * them.
 */
import { describe, expect, it, vi } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const g = useGatewayServer();

const rowsOf = (ids: readonly string[]) =>
  g.database.db
    .selectFrom("devices")
    .leftJoin("device_sessions", "device_sessions.device_id", "devices.id")
    .select(["devices.id", "devices.connection", "devices.disconnected_at", "device_sessions.session_id"])
    .where("devices.id", "in", ids)
    .execute();

describe("batched link ends", () => {
  it("a fleet that drops at once: sessions gone, devices disconnected, running jobs queued again, in fewer transactions than links", async () => {
    const n = 30;
    // Every device's first apply goes out and is never answered: its job stays running on the link.
    const { fleet, devices } = await g.fleet(n, { concurrency: n, apply: { neverAnswer: true }, reconnect: false });
    const ids = devices.map((d) => d.id);
    const jobs = await waitUntil(
      () => g.database.db.selectFrom("jobs").select(["id", "state", "apply_id"]).where("device_id", "in", ids).execute(),
      (js) => js.length === n && js.every((j) => j.state === "running"),
      20_000,
      "every first job running",
    );
    expect(jobs.every((j) => j.apply_id !== null)).toBe(true);
    expect((await rowsOf(ids)).every((r) => r.connection === "connected" && r.session_id !== null)).toBe(true);

    const disconnected: GatewayEventMap["device-disconnected"][] = [];
    const off = g.server.deps.deviceLink.events.on("device-disconnected", (e) => disconnected.push(e));
    // Only the link ends' transactions count: the server's other work (duty ticks, the status writer) runs meanwhile.
    const db = g.server.deps.db;
    const transaction = db.transaction.bind(db);
    let linkEndTransactions = 0;
    const transactions = vi.spyOn(db, "transaction").mockImplementation(() => {
      if (new Error().stack?.includes("link-end-batch")) linkEndTransactions++;
      return transaction();
    });
    try {
      await fleet.disconnectAll();
      const rows = await waitUntil(
        () => rowsOf(ids),
        (rs) => rs.length === n && rs.every((r) => r.connection === "disconnected"),
        20_000,
        "every device disconnected",
      );
      for (const r of rows) {
        expect(r.session_id).toBeNull();
        expect(r.disconnected_at).not.toBeNull();
      }
      await waitUntil(
        () => disconnected.length,
        (k) => k === n,
      );
      expect(new Set(disconnected.map((e) => e.deviceId))).toEqual(new Set(ids));
      // One transaction per link was the rule before: the links that closed while one ran go in the next.
      // PGlite answers in-process, so each transaction there is done before the next close is read.
      expect(linkEndTransactions).toBeGreaterThan(0);
      expect(linkEndTransactions).toBeLessThanOrEqual(n);
      if (testDatabaseKind() === "postgres") expect(linkEndTransactions).toBeLessThan(n / 2);
    } finally {
      transactions.mockRestore();
      off();
    }
    const after = await g.database.db
      .selectFrom("jobs")
      .select(["state", "apply_id", "started_at"])
      .where("device_id", "in", ids)
      .execute();
    expect(after).toHaveLength(n);
    for (const j of after) expect(j).toMatchObject({ state: "queued", apply_id: null, started_at: null });

    // The next link of a device takes its queued job and completes it.
    const sim = fleet.device(0);
    sim.setApplyBehaviour({ neverAnswer: false });
    await sim.connect();
    const [job] = await g.database.db.selectFrom("jobs").select("id").where("device_id", "=", ids[0]!).execute();
    await g.waitForJobs([job!.id], "complete", 20_000);
  });
});
