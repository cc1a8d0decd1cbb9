/**
 * GET /metrics: Prometheus text with the gateway's figures, behind
 * TERN_METRICS_TOKEN when it is set, and outside /api (not in the OpenAPI
 * document the security matrix walks).
 */
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const TOKEN = "metrics-token-0123456789";
const g = useGatewayServer({ TERN_METRICS_TOKEN: TOKEN });

const scrape = async () => {
  const res = await fetch(`${g.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  return res.text();
};
const value = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("GET /metrics", () => {
  it("needs the token when one is configured", async () => {
    const none = await fetch(`${g.server.url}/metrics`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    const wrong = await fetch(`${g.server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } });
    expect(wrong.status).toBe(401);
  });

  it("counts connected devices, jobs, latencies, status messages and batches", async () => {
    const { fleet } = await g.fleet(2);
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 2,
    );
    for (const d of fleet.devices) d.sendStatus();
    await new Promise((r) => setTimeout(r, 300));
    const text = await scrape();
    expect(value(text, "tern_connected_devices")).toBe(2);
    expect(value(text, 'tern_jobs{state="complete",type="modify"}')).toBe(2);
    expect(value(text, 'tern_job_duration_seconds_count{type="modify",result="complete"}')).toBe(2);
    expect(value(text, 'tern_apply_round_trip_seconds_count{result="ok"}')).toBe(2);
    expect(value(text, "tern_status_messages_total")).toBeGreaterThanOrEqual(2);
    expect(value(text, "tern_ingest_batch_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(value(text, 'tern_ws_messages_total{type="hello"}')).toBe(2);
    for (const name of [
      "tern_ingest_batch_rows",
      "tern_ingest_dropped_total",
      "tern_ws_errors_total",
      "tern_notifications_raised_total",
      "tern_notification_delivery_failures_total",
      "tern_process_cpu_seconds_total",
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    await fleet.device(0).disconnect();
    await waitUntil(scrape, (t) => value(t, "tern_connected_devices") === 1);
  });

  it("is not part of the REST API document", async () => {
    const doc = (await (await fetch(`${g.server.url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.includes("metrics"))).toBe(false);
  });
});
