/**
 * Job live events, one per statement (migration 20261126-702): a statement
 * that touches several jobs announces them once per organization and new
 * state (`*`, status, count), one job keeps its own id; a write that leaves
 * the state alone announces nothing. Over a fan-out to connected devices the
 * console's stream still hears every job created, started and completed:
 * the counts add up to the jobs, no more and no fewer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { lastEventId as journalEnd } from "../support/live-journal.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { openSse, type SseClient, type SseEvent } from "../support/sse.ts";

const g = useGatewayServer();
const open: SseClient[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

interface JobEvent {
  action: string;
  id: string;
  data: { status?: string; count?: number };
}

/** The organization's job events journaled after `afterId`, in order. */
async function jobEventsAfter(afterId: string): Promise<JobEvent[]> {
  const rows = await g.database.db
    .selectFrom("live_events")
    .select("event")
    .where("organization_id", "=", g.org.id)
    .where("id", ">", afterId as never)
    .orderBy("id")
    .execute();
  return rows.map((r) => r.event as unknown as JobEvent & { kind: string }).filter((e) => e.kind === "job");
}

const lastEventId = () => journalEnd(g.database.db);

/** How many jobs the events announce per action and status. */
function tally(events: JobEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) {
    const key = `${e.action}:${e.data.status}`;
    out[key] = (out[key] ?? 0) + (e.id === "*" ? e.data.count! : 1);
  }
  return out;
}

describe("job live events per statement", () => {
  it("several jobs of one statement are one event; one job keeps its id; no state change, no event", async () => {
    const mark = await lastEventId();
    const { devices } = await g.fleet(3, { connect: false, queueConfig: true });
    const jobs = await g.database.db
      .selectFrom("jobs")
      .select(["id", "device_id"])
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    expect(jobs).toHaveLength(3);
    expect(await jobEventsAfter(mark)).toEqual([
      { kind: "job", action: "created", id: "*", at: expect.any(String), data: { status: "queued", count: 3 } },
    ]);

    // A write that does not move the state: nothing to refetch.
    const quiet = await lastEventId();
    await g.database.db
      .updateTable("jobs")
      .set({ attempts: 0 })
      .where(
        "id",
        "in",
        jobs.map((j) => j.id),
      )
      .execute();
    expect(await jobEventsAfter(quiet)).toEqual([]);

    // Two of three moved in one statement: one event counting two.
    const moved = await lastEventId();
    await g.database.db
      .updateTable("jobs")
      .set({ state: "failed", finished_at: new Date() })
      .where("id", "in", [jobs[0]!.id, jobs[1]!.id])
      .execute();
    expect(await jobEventsAfter(moved)).toMatchObject([{ action: "updated", id: "*", data: { status: "failed", count: 2 } }]);

    // One job: its own id, as the console's job pages and the per-row trigger had it.
    const single = await lastEventId();
    const [jobId] = await g.change(devices[2]!.id);
    expect(await jobEventsAfter(single)).toMatchObject([{ action: "created", id: jobId, data: { status: "queued" } }]);
    expect((await jobEventsAfter(single))[0]!.data).not.toHaveProperty("count");

    const deleted = await lastEventId();
    await g.database.db
      .deleteFrom("jobs")
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    expect(tally(await jobEventsAfter(deleted))).toEqual({ "deleted:failed": 2, "deleted:queued": 2 });
  });

  it("a fan-out to connected devices: the stream hears every job created, started and completed, once", async () => {
    const { devices } = await g.fleet(6);
    const first = await g.database.db
      .selectFrom("jobs")
      .select("id")
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    await g.waitForJobs(
      first.map((j) => j.id),
      "complete",
    );
    const login = await fetch(`${g.server.url}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const client = await openSse(`${g.server.url}/api/events`, { authorization: `Bearer ${accessToken}` });
    open.push(client);
    expect(client.status).toBe(200);
    const mark = await lastEventId();

    const api = await g.api();
    const label = await api.call<{ id: string }>("POST", "/api/pathlabels", { body: { name: "events-label", type: "DIA" } });
    const policy = await api.call<{ id: string }>("POST", "/api/mlpolicies", {
      body: {
        name: "events-policy",
        rules: [
          {
            name: "voice",
            priority: 1,
            match: { protocol: "udp", ports: "5060" },
            action: { order: "link-quality", pathlabels: [label.body.id] },
          },
        ],
      },
    });
    expect(policy.status).toBe(201);
    const answer = await api.call<{ jobIds: string[] }>("POST", `/api/mlpolicies/${policy.body.id}/install`, {
      body: { deviceIds: devices.map((d) => d.id) },
    });
    expect(answer.status).toBe(202);
    await g.waitForJobs(answer.body.jobIds, "complete");

    const expected = { "created:queued": 6, "updated:running": 6, "updated:complete": 6 };
    const journaled = await jobEventsAfter(mark);
    expect(tally(journaled)).toEqual(expected);
    // The fan-out's INSERT is one statement: one event for its six jobs.
    expect(journaled.filter((e) => e.action === "created")).toHaveLength(1);

    // The stream delivers the same events (what the console invalidates its job queries on).
    const streamed = () =>
      tally(
        client.events
          .filter((e: SseEvent) => e.data.kind === "job" && BigInt(e.id!) > BigInt(mark))
          .map((e) => e.data as unknown as JobEvent),
      );
    await waitUntil(streamed, (t) => t["updated:complete"] === 6);
    expect(streamed()).toEqual(expected);
  });
});
