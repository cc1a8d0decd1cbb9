/**
 * Time-outs: an apply without a result fails its jobs with reason `timeout`;
 * when the device later reports the job's hash as applied (a status or a late
 * apply-result), the job is corrected to complete and `corrected_at` is set.
 */
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const TIMEOUT_MS = 800;
const g = useGatewayServer({ TERN_JOB_TIMEOUT_MS: String(TIMEOUT_MS) });

const jobsOf = (id: string) =>
  g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", id).orderBy("created_at").execute();

describe("job time-out and correction by hash", () => {
  it("fails a job without a result, then corrects it when a status reports its hash", async () => {
    // The device applies but never answers; no periodic status during the test.
    const { fleet, devices } = await g.fleet(1, {
      apply: { neverAnswer: true, applySilently: true },
      statusIntervalMs: 3_600_000,
    });
    const device = devices[0]!;
    const sim = fleet.device(0);
    const [first] = await jobsOf(device.id);
    const [failed] = await g.waitForJobs([first!.id], "failed", 10_000);
    expect(failed!.error).toMatchObject({ reason: "timeout" });
    // Not before its time: sent (started) to failed is at least the time-out (timestamps have ms precision).
    expect(failed!.finished_at!.getTime() - failed!.started_at!.getTime()).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(failed!.corrected_at).toBeNull();
    expect(sim.appliedHash).toBe(first!.target_hash);

    // The device says it runs that config.
    expect(sim.sendStatus()).toBe(true);
    const [corrected] = await g.waitForJobs([first!.id], "complete");
    expect(corrected!.corrected_at).not.toBeNull();
    expect(corrected!.finished_at).toEqual(failed!.finished_at);
    const row = await g.database.db
      .selectFrom("devices")
      .select("applied_hash")
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(row.applied_hash).toBe(first!.target_hash);
    // The automatic re-sync that went out after the time-out is settled by the same report.
    const all = await waitUntil(
      () => jobsOf(device.id),
      (j) => j.every((x) => x.state === "complete"),
    );
    // (One, or two if the machine was slow enough for the first re-sync to time out as well.)
    expect(all.filter((j) => j.type === "sync").length).toBeLessThanOrEqual(2);
    const metrics = await (await fetch(`${g.server.url}/metrics`)).text();
    expect(metrics).toMatch(/tern_jobs_timed_out_total \d/);
    expect(Number(/tern_jobs_corrected_total (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it("corrects a timed-out job when its apply-result arrives late", async () => {
    const { fleet, devices } = await g.fleet(1, { apply: { delayMs: TIMEOUT_MS * 2 }, statusIntervalMs: 3_600_000 });
    const device = devices[0]!;
    const [first] = await jobsOf(device.id);
    const [failed] = await g.waitForJobs([first!.id], "failed", 10_000);
    expect(failed!.error).toMatchObject({ reason: "timeout" });
    await fleet.device(0).waitFor("apply-result", { timeoutMs: 10_000 });
    const [corrected] = await g.waitForJobs([first!.id], "complete");
    expect(corrected!.corrected_at).not.toBeNull();
  });
});
