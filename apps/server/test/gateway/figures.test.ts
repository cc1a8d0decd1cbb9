/**
 * A simulated fleet end to end against the real server, printing figures
 * (no speed assertions): onboarding with first configs as jobs, the apply
 * round trip, status ingestion rate and batch sizes. A ring of tunnels gives
 * every device two tunnel ends to report.
 *
 *   TERN_FIGURES_DEVICES=500 TERN_FIGURES_ROUNDS=20 npx vitest run test/gateway/figures.test.ts
 */
import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { inTransaction, systemCtx } from "../../src/services/context.ts";
import { queueConfigJobs } from "../../src/services/desired-config.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const DEVICES = Number(process.env.TERN_FIGURES_DEVICES ?? 40);
const ROUNDS = Number(process.env.TERN_FIGURES_ROUNDS ?? 10);
const g = useGatewayServer({ TERN_INGEST_FLUSH_MS: "250" });

const count = async (table: "tunnel_samples" | "jobs", where: ReturnType<typeof sql>) =>
  Number(
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`.execute(g.database.db)).rows[0]!
      .n,
  );

describe("a simulated fleet against the real server", () => {
  it(`onboards ${DEVICES} devices, configures them through jobs and takes in their status`, async () => {
    const { fleet, devices } = await g.fleet(DEVICES, {
      connect: false,
      queueConfig: false,
      statusIntervalMs: 3_600_000,
      concurrency: 50,
    });
    const ids = devices.map((d) => d.id);
    const tunnels = devices.map((d, i) => {
      const next = devices[(i + 1) % devices.length]!;
      const id = randomUUID();
      return {
        id,
        organization_id: g.org.id,
        num: i + 1,
        device_a: d.id,
        interface_a: d.wanId,
        device_b: next.id,
        interface_b: next.wanId,
        endpoint_key: `${d.id}|${next.id}`,
        psk_enc: g.server.deps.keyring.encrypt(randomBytes(16).toString("hex"), id),
        notifications: toJson({ rtt: null, dropRate: null }),
      };
    });
    await g.database.db.insertInto("tunnels").values(tunnels).execute();
    const queuedAt = performance.now();
    const { jobIds } = await inTransaction(systemCtx(g.server.deps, g.org), (tx) =>
      queueConfigJobs(tx, { deviceIds: ids, type: "tunnels", tasks: [{ kind: "onboard", summary: "ring of tunnels" }] }),
    );
    const compileMs = performance.now() - queuedAt;
    expect(jobIds).toHaveLength(DEVICES);

    const connectAt = performance.now();
    await fleet.connectAll();
    const connectedMs = performance.now() - connectAt;
    await g.waitForJobs(jobIds, "complete", 120_000);
    const configuredMs = performance.now() - connectAt;
    const rt = (await g.server.deps.metrics.applyRoundTrip.get()).values;
    const rtSum = rt.find((v) => v.metricName?.endsWith("_sum"))?.value ?? 0;
    const rtCount = rt.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
    await waitUntil(
      () => fleet.devices.every((d) => d.tunnels.length === 2),
      (ok) => ok,
      30_000,
    );

    const samplesOf = () => count("tunnel_samples", sql`device_id = any(${ids}::uuid[])`);
    await g.server.gateway.ingest.flush();
    const baseline = await samplesOf();
    const before = g.server.gateway.ingest.recent.length;
    const sendAt = performance.now();
    for (let r = 0; r < ROUNDS; r++) for (const d of fleet.devices) d.sendStatus();
    const sentMs = performance.now() - sendAt;
    const expected = ROUNDS * DEVICES * 2;
    // Every sample of every status sent arrives (a device's own schedule may add a few more).
    await waitUntil(samplesOf, (n) => n >= baseline + expected, 120_000);
    const ingestMs = performance.now() - sendAt;
    const batches = g.server.gateway.ingest.recent.slice(before);
    expect(batches.length).toBeLessThan(ROUNDS * DEVICES);

    const sizes = batches.map((b) => b.samples);
    const lines = [
      `fleet figures (${g.database.kind}, ${DEVICES} devices, ${DEVICES} tunnels):`,
      `  compile + queue ${DEVICES} configs: ${compileMs.toFixed(0)} ms`,
      `  connect (hello/welcome): ${connectedMs.toFixed(0)} ms; all first configs applied: ${configuredMs.toFixed(0)} ms`,
      `  apply round trip (server send → result): mean ${((rtSum / Math.max(1, rtCount)) * 1000).toFixed(1)} ms over ${rtCount}`,
      `  status: ${ROUNDS * DEVICES} messages sent in ${sentMs.toFixed(0)} ms, ${expected} samples in the database after ${ingestMs.toFixed(0)} ms (${((expected / ingestMs) * 1000).toFixed(0)} samples/s, ${(((ROUNDS * DEVICES) / ingestMs) * 1000).toFixed(0)} statuses/s)`,
      `  batches: ${batches.length}, samples per batch max ${Math.max(...sizes)} mean ${(sizes.reduce((a, b) => a + b, 0) / batches.length).toFixed(0)}, write time max ${Math.max(...batches.map((b) => b.ms)).toFixed(1)} ms mean ${(batches.reduce((a, b) => a + b.ms, 0) / batches.length).toFixed(1)} ms`,
    ];
    console.log(lines.join("\n"));
  });
});
