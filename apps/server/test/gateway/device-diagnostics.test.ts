/**
 * Diagnostics against a connected device (POST /api/devices/{id}/diagnostics/…,
 * GET /logs): the device is a protocol-level client here, so the test decides
 * when each line goes out and sees the `cancel` the server sends; the agent's
 * side (the real ping, traceroute and resolver) is apps/agent/test/control/diagnostics.
 */
import type { Job, TokenPair } from "@tern/protocol";
import { describe, expect, it } from "vitest";
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

async function connectedDevice(): Promise<{ id: string; raw: RawLink }> {
  const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
  const device = devices[0]!;
  const raw = await openRawLink(g.server.url, device.token, device);
  raw.send(helloFor(device.machineId));
  await raw.next("welcome");
  return { id: device.id, raw };
}

type StreamEvent = { type: string; lines?: string[]; jobId?: string; result?: unknown; code?: string };

/** POSTs a diagnostic and reads its server-sent events one by one as they arrive. */
async function openRun(token: string, deviceId: string, kind: string, body: unknown, signal?: AbortSignal) {
  const res = await fetch(`${g.server.url}/api/devices/${deviceId}/diagnostics/${kind}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const queued: StreamEvent[] = [];
  /** The next event (null when the stream ended). */
  const next = async (): Promise<StreamEvent | null> => {
    for (;;) {
      if (queued.length) return queued.shift()!;
      const cut = buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart());
        if (data.length) queued.push(JSON.parse(data.join("\n")) as StreamEvent);
        continue;
      }
      const { done, value } = await reader.read();
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return { next };
}

describe("device diagnostics over the link", () => {
  it("streams each line as the device sends it, before the device has sent the last; then the result, kept in a job", async () => {
    const token = await adminToken();
    const { id, raw } = await connectedDevice();
    const run = await openRun(token, id, "ping", { target: "192.0.2.1", count: 2, intervalMs: 200 });
    const started = await run.next();
    expect(started).toMatchObject({ type: "started", deviceId: id, kind: "ping", target: "192.0.2.1" });
    const request = await raw.next("request", (m) => m.method === "ping");
    expect(request.params).toMatchObject({ target: "192.0.2.1", count: 2, intervalMs: 200 });

    raw.send({ type: "request-progress", id: request.id, seq: 0, lines: ["PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data."] });
    // The first line reaches the caller while the device has sent nothing else yet.
    expect(await run.next()).toEqual({ type: "lines", lines: ["PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data."] });

    raw.send({
      type: "request-progress",
      id: request.id,
      seq: 1,
      lines: ["64 bytes from 192.0.2.1: icmp_seq=1 ttl=64 time=0.5 ms"],
    });
    expect(await run.next()).toMatchObject({ type: "lines", lines: [expect.stringMatching(/^64 bytes/)] });
    const result = {
      transmitted: 2,
      received: 2,
      lossPercent: 0,
      rttAvgMs: 0.5,
      rttMinMs: 0.4,
      rttMaxMs: 0.6,
      stopped: null,
      output: "…",
    };
    raw.send({ type: "response", id: request.id, ok: true, result });
    const end = await run.next();
    expect(end).toMatchObject({ type: "result", jobId: started!.jobId, result });
    expect(await run.next()).toBeNull();

    const job = await fetch(`${g.server.url}/api/jobs/${started!.jobId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(await job.json()).toMatchObject({ type: "ping", state: "complete", result, error: null } satisfies Partial<Job>);
  });

  it("the caller going away cancels the run on the device, and the job says cancelled", async () => {
    const token = await adminToken();
    const { id, raw } = await connectedDevice();
    const abort = new AbortController();
    const run = await openRun(token, id, "ping", { target: "192.0.2.1", count: 100 }, abort.signal);
    const started = await run.next();
    const request = await raw.next("request", (m) => m.method === "ping");
    raw.send({ type: "request-progress", id: request.id, seq: 0, lines: ["PING 192.0.2.1"] });
    expect(await run.next()).toMatchObject({ type: "lines" });
    abort.abort();
    const cancel = await raw.next("request", (m) => m.method === "cancel");
    expect(cancel.params).toEqual({ id: request.id });
    // The device stops it and answers both; neither is refused as unknown.
    raw.send({ type: "response", id: cancel.id, ok: true, result: { stopped: true } });
    raw.send({
      type: "response",
      id: request.id,
      ok: true,
      result: { transmitted: 1, received: 1, lossPercent: 0, rttAvgMs: 1, stopped: "cancelled", output: "" },
    });
    const job = await waitUntil(
      async () =>
        (await (
          await fetch(`${g.server.url}/api/jobs/${started!.jobId}`, { headers: { authorization: `Bearer ${token}` } })
        ).json()) as Job,
      (j: Job) => j.state === "failed",
      10_000,
      "the cancelled job",
    );
    expect(job.error).toMatchObject({ reason: "cancelled" });
    await new Promise((r) => setTimeout(r, 200));
    expect(raw.messages.filter((m) => m.type === "error")).toEqual([]);
  });

  it("an older agent (the simulator) answers one-shot: its output comes as lines before the result; dns is refused", async () => {
    const token = await adminToken();
    const { devices } = await g.fleet(1, { queueConfig: false });
    const run = await openRun(token, devices[0]!.id, "traceroute", { target: "192.0.2.9" });
    expect(await run.next()).toMatchObject({ type: "started" });
    expect(await run.next()).toEqual({ type: "lines", lines: ["traceroute to 192.0.2.9", " 1  192.0.2.9  1.000 ms"] });
    expect(await run.next()).toMatchObject({ type: "result", result: { output: expect.stringContaining("192.0.2.9") } });
    const dns = await openRun(token, devices[0]!.id, "dns", { name: "localhost" });
    expect(await dns.next()).toMatchObject({ type: "started" });
    expect(await dns.next()).toMatchObject({ type: "error", code: "DEVICE_REQUEST_FAILED" });
    expect(await dns.next()).toBeNull();
  });

  it("GET /logs asks the device for its log lines and answers them", async () => {
    const token = await adminToken();
    const { id, raw } = await connectedDevice();
    raw.ws.on("message", (data) => {
      const m = JSON.parse(String(data)) as {
        type: string;
        id: string;
        method: string;
        params: { lines: number; level: string };
      };
      if (m.type === "request" && m.method === "log-read")
        raw.send({
          type: "response",
          id: m.id,
          ok: true,
          result: {
            lines: [`{"level":40,"msg":"${m.params.level} ${m.params.lines}"}`],
            truncated: false,
            file: "/var/lib/tern/logs/agent.log",
          },
        });
    });
    const res = await fetch(`${g.server.url}/api/devices/${id}/logs?lines=20&level=warn`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { jobId: string };
    expect(body).toEqual({
      deviceId: id,
      level: "warn",
      lines: ['{"level":40,"msg":"warn 20"}'],
      truncated: false,
      file: "/var/lib/tern/logs/agent.log",
      jobId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    // The read is a job: its result says how many lines came back, not the lines.
    const job = await fetch(`${g.server.url}/api/jobs/${body.jobId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(await job.json()).toMatchObject({
      type: "logs",
      state: "complete",
      result: { level: "warn", lines: 1, truncated: false, file: "/var/lib/tern/logs/agent.log" },
    });
  });
});
