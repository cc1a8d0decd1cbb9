/**
 * A new link's jobs in one statement (jobs/job-store.ts `restartLinkJobs`, the hello's transaction): for a
 * device with an apply, what an earlier link left running and what is queued with a target start as that
 * apply; a fan-out's job without a target waits; an agent action left running is not touched (it was asked
 * of that link); finished jobs stay finished. A device without an apply gets its running jobs back in the
 * queue. The same end state `requeueRunningMany` then `startQueuedJobs` leave, which the hello ran before.
 */
import { describe, expect, it } from "vitest";
import { requeueRunningMany, restartLinkJobs, startQueuedJobs } from "../../src/jobs/job-store.ts";
import { insertTestJob } from "../support/device-fixtures.ts";
import { useGatewayServer } from "../support/gateway.ts";

const g = useGatewayServer();

/** The jobs of the test: state, apply, hash, attempts, whether started_at is set. */
async function jobsOf(ids: string[]) {
  const rows = await g.database.db
    .selectFrom("jobs")
    .select(["id", "state", "apply_id", "sent_hash", "attempts", "started_at"])
    .where("id", "in", ids)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const r = byId.get(id)!;
    return { state: r.state, apply: r.apply_id, hash: r.sent_hash, attempts: r.attempts, started: r.started_at !== null };
  });
}

/** Three devices' jobs as a relink finds them; returns the job ids in a fixed order. */
async function scene() {
  const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
  const [a, b, c] = devices.map((d) => d.id) as [string, string, string];
  const t = { database: g.database, admin: { orgId: g.org.id } };
  const job = (device: string, options: Parameters<typeof insertTestJob>[2]) => insertTestJob(t, device, options);
  const ids = [
    await job(a, { state: "running" }),
    await job(a, { state: "queued" }),
    await job(a, { state: "queued" }),
    await job(a, { state: "running", type: "restart-agent" }),
    await job(a, { state: "complete", finishedAt: new Date() }),
    await job(b, { state: "running" }),
    await job(b, { state: "queued" }),
  ];
  // What an earlier link left on the running ones; the third of a's a fan-out's job not compiled yet.
  await g.database.db
    .updateTable("jobs")
    .set({ apply_id: "old-apply", sent_hash: "old", started_at: new Date(), attempts: 1 })
    .where("state", "=", "running")
    .where("id", "in", ids)
    .execute();
  await g.database.db.updateTable("jobs").set({ target_hash: null }).where("id", "=", ids[2]!).execute();
  return { a, b, c, ids };
}

describe("a new link's jobs", () => {
  it("start as the apply, wait without a target, leave actions and finished jobs, requeue without an apply", async () => {
    const { a, b, c, ids } = await scene();
    const started = await restartLinkJobs(g.database.db, [
      { deviceId: a, apply: { applyId: "new-apply", hash: "h-new" } },
      { deviceId: b, apply: null },
      // An apply, but nothing to start.
      { deviceId: c, apply: { applyId: "c-apply", hash: "h-c" } },
    ]);
    expect(started).toEqual(new Set([a]));
    expect(await jobsOf(ids)).toEqual([
      { state: "running", apply: "new-apply", hash: "h-new", attempts: 2, started: true },
      { state: "running", apply: "new-apply", hash: "h-new", attempts: 1, started: true },
      { state: "queued", apply: null, hash: null, attempts: 0, started: false },
      { state: "running", apply: "old-apply", hash: "old", attempts: 1, started: true },
      { state: "complete", apply: null, hash: null, attempts: 0, started: false },
      { state: "queued", apply: null, hash: null, attempts: 1, started: false },
      { state: "queued", apply: null, hash: null, attempts: 0, started: false },
    ]);
  });

  it("leaves what requeueRunningMany then startQueuedJobs leave", async () => {
    const one = await scene();
    await restartLinkJobs(g.database.db, [
      { deviceId: one.a, apply: { applyId: "x", hash: "h" } },
      { deviceId: one.b, apply: null },
    ]);
    const two = await scene();
    await requeueRunningMany(g.database.db, [two.a, two.b]);
    await startQueuedJobs(g.database.db, [{ deviceId: two.a, applyId: "x", hash: "h" }]);
    expect(await jobsOf(one.ids)).toEqual(await jobsOf(two.ids));
  });
});
