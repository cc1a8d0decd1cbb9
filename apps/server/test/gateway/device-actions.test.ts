/**
 * Remote actions on a connected device (POST /api/devices/{id}/actions): the
 * server sends `device-action` over the device's websocket and the answer
 * ends the job. `stop` records the data plane stopped and holds config jobs
 * queued; `start` records it running and the held jobs go out; `reset`
 * withdraws the approval (the link closes, nothing more is sent); an agent
 * that does not know the request fails the job with its answer. The device is
 * a protocol-level client (the agent's side: apps/agent/test/daemon/device-actions.test.ts).
 */
import type { Job, TokenPair } from "@tern/protocol";
import { CLOSE_CODES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink, type RawLink } from "../support/raw-link.ts";

const g = useGatewayServer();

async function adminToken(): Promise<string> {
  const res = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  return ((await res.json()) as TokenPair).accessToken;
}

async function call<T>(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${g.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

type Answer = { ok: true; dataPlane: "running" | "stopped" } | { ok: false; error: string };

/** A connected device that answers `device-action` requests as `answer` says, and config applies as applied. */
async function actingDevice(answer: (action: string) => Answer) {
  const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
  const device = devices[0]!;
  const raw: RawLink = await openRawLink(g.server.url, device.token, device);
  raw.send(helloFor(device.machineId));
  await raw.next("welcome");
  const actions: string[] = [];
  raw.ws.on("message", (data) => {
    const m = JSON.parse(String(data)) as {
      type: string;
      id: string;
      method?: string;
      hash?: string;
      params?: { action: string };
    };
    if (m.type === "request" && m.method === "device-action") {
      const action = m.params!.action;
      actions.push(action);
      const a = answer(action);
      raw.send(
        a.ok
          ? { type: "response", id: m.id, ok: true, result: { action, dataPlane: a.dataPlane, message: `${action} done` } }
          : { type: "response", id: m.id, ok: false, error: a.error },
      );
    } else if (m.type === "apply")
      raw.send({ type: "apply-result", id: m.id, ok: true, appliedHash: m.hash, rolledBack: false, drivers: [] });
  });
  return { device, raw, actions };
}

const dataPlaneOf = async (id: string) =>
  await g.database.db.selectFrom("devices").select(["data_plane", "is_approved"]).where("id", "=", id).executeTakeFirstOrThrow();

describe("device actions over the device link", () => {
  it("stop holds config jobs while the data plane is down; start sends them; every end is told (jobs-finished)", async () => {
    const token = await adminToken();
    const told: GatewayEventMap["jobs-finished"][] = [];
    const stopListening = g.server.deps.deviceLink.events.on("jobs-finished", (e) => told.push(e));
    const { device, raw, actions } = await actingDevice((action) => ({
      ok: true,
      dataPlane: action === "stop" ? "stopped" : "running",
    }));
    const act = (action: string) => call<{ jobIds: string[] }>(token, "POST", `/api/devices/${device.id}/actions`, { action });
    const ended = (id: string) =>
      waitUntil(
        async () => (await call<Job>(token, "GET", `/api/jobs/${id}`)).body,
        (j) => j.state === "complete" || j.state === "failed",
        10_000,
        `job ${id}`,
      );

    const stop = await act("stop");
    expect(stop.status).toBe(202);
    const stopped = await ended(stop.body.jobIds[0]!);
    expect(stopped).toMatchObject({ type: "stop", state: "complete", error: null });
    expect(stopped.tasks.map((t) => t.summary)).toContain("stop done");
    expect(await dataPlaneOf(device.id)).toMatchObject({ data_plane: "stopped" });
    const device1 = await call<{ dataPlane: string }>(token, "GET", `/api/devices/${device.id}`);
    expect(device1.body.dataPlane).toBe("stopped");

    // A change while stopped: its job waits, nothing is sent.
    const applies = () => raw.messages.filter((m) => m.type === "apply").length;
    const sentBefore = applies();
    const [changeJob] = await g.change(device.id, 1);
    await new Promise((r) => setTimeout(r, 600));
    expect(applies()).toBe(sentBefore);
    expect((await g.jobs([changeJob!]))[0]?.state).toBe("queued");

    const start = await act("start");
    const started = await ended(start.body.jobIds[0]!);
    expect(started).toMatchObject({ type: "start", state: "complete" });
    expect(await dataPlaneOf(device.id)).toMatchObject({ data_plane: "running" });
    await g.waitForJobs([changeJob!], "complete");
    expect(applies()).toBeGreaterThan(sentBefore);

    // sync: forced, the same hash again.
    const sync = await act("sync");
    expect(sync.status).toBe(202);
    await g.waitForJobs(sync.body.jobIds, "complete");
    expect(actions).toEqual(["stop", "start"]);
    // The agent actions' ends reach the notification engine and the job metrics like the config jobs' (sync among them).
    const toldJobs = () =>
      told.filter((e) => e.deviceId === device.id).flatMap((e) => e.jobs.map((j) => [j.id, j.type, j.state]));
    await waitUntil(toldJobs, (l) => l.length >= 4, 5000, "jobs-finished of every job");
    stopListening();
    expect(toldJobs()).toEqual(
      expect.arrayContaining([
        [stop.body.jobIds[0], "stop", "complete"],
        [start.body.jobIds[0], "start", "complete"],
        [changeJob, "modify", "complete"],
        [sync.body.jobIds[0], "sync", "complete"],
      ]),
    );
    raw.ws.close();
  });

  it("an agent that does not know the request fails the job with its answer; nothing changes", async () => {
    const token = await adminToken();
    const { device, raw } = await actingDevice(() => ({
      ok: false,
      error: 'INVALID_REQUEST: unknown request method "device-action"',
    }));
    const res = await call<{ jobIds: string[] }>(token, "POST", `/api/devices/${device.id}/actions`, { action: "stop" });
    const job = await waitUntil(
      async () => (await call<Job>(token, "GET", `/api/jobs/${res.body.jobIds[0]}`)).body,
      (j) => j.state === "failed",
      10_000,
      "the job to fail",
    );
    expect(job.error?.reason).toBe("device");
    expect(job.error?.message).toContain("unknown request method");
    expect(await dataPlaneOf(device.id)).toMatchObject({ data_plane: "running", is_approved: true });
    raw.ws.close();
  });

  it("reset: the agent answers, the device is no longer approved and its link is closed", async () => {
    const token = await adminToken();
    const { device, raw } = await actingDevice(() => ({ ok: true, dataPlane: "running" }));
    const res = await call<{ jobIds: string[] }>(token, "POST", `/api/devices/${device.id}/actions`, {
      action: "reset",
      confirm: true,
    });
    expect(res.status).toBe(202);
    const closed = await raw.closed;
    expect(closed.code).toBe(CLOSE_CODES.notApproved);
    const job = (await call<Job>(token, "GET", `/api/jobs/${res.body.jobIds[0]}`)).body;
    expect(job).toMatchObject({ type: "reset", state: "complete" });
    const row = await g.database.db
      .selectFrom("devices")
      .select(["is_approved", "applied_hash", "interfaces"])
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(row.is_approved).toBe(false);
    expect(row.applied_hash).toBeNull();
    // Its configuration is kept for the next approval.
    expect(row.interfaces.length).toBeGreaterThan(0);
  });
});
