/**
 * Fan-out answered before compiling (issue 14, services/fanout): installing a
 * multi-link policy commits the change and target-less jobs, answers, and
 * the recompiler compiles the devices afterwards. Against the real server
 * and simulated devices: the configs the devices end up with are exactly
 * what the compiler makes of their settings (same hash, same config); a job
 * waiting for its compile is neither sent nor settled; and a fan-out whose
 * server stopped after answering is finished by the next start.
 */
import { canonicalJson } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { compileDeviceConfig } from "../../src/compile/index.ts";
import { systemCtx } from "../../src/services/context.ts";
import { loadCompileInputs } from "../../src/services/desired-config.ts";
import { readDesiredConfig } from "../../src/services/desired-config-seal.ts";
import type { Recompiler } from "../../src/services/fanout/recompile.ts";
import { installMlPolicy } from "../../src/services/mlpolicy-install.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer();

async function policy(name: string): Promise<string> {
  const api = await g.api();
  const label = await api.call<{ id: string }>("POST", "/api/pathlabels", { body: { name: `${name}-label`, type: "DIA" } });
  expect(label.status).toBe(201);
  const created = await api.call<{ id: string }>("POST", "/api/mlpolicies", {
    body: {
      name,
      rules: [
        {
          name: "voice",
          priority: 1,
          match: { protocol: "udp", ports: "5060-5061" },
          action: { order: "link-quality", pathlabels: [label.body.id] },
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** Each device's stored desired config is what the compiler makes of its settings now: same hash, same config. */
async function expectCompiledAsToday(devices: SimRow[], rules: string[] | null): Promise<void> {
  const { db } = g.database;
  const inputs = await loadCompileInputs(
    db,
    g.server.deps.keyring,
    g.org.id,
    devices.map((d) => d.id),
  );
  for (const d of devices) {
    const fresh = compileDeviceConfig(inputs.get(d.id)!);
    const row = await db
      .selectFrom("devices")
      .select(["desired_hash", "desired_stale"])
      .where("id", "=", d.id)
      .executeTakeFirstOrThrow();
    expect(row.desired_stale).toBe(false);
    expect(row.desired_hash).toBe(fresh.hash);
    const stored = await readDesiredConfig(db, g.server.deps.keyring, d.id);
    expect(canonicalJson(stored)).toBe(canonicalJson(fresh.config));
    expect(stored?.policy?.rules.map((r) => r.name) ?? null).toEqual(rules);
  }
}

describe("fan-out answered before compiling", () => {
  it("installs on every device: jobs complete with the recompiled config, identical to a compile of the device now", async () => {
    const { fleet, devices } = await g.fleet(4);
    await g.tunnel(devices[0]!, devices[1]!);
    await g.tunnel(devices[1]!, devices[2]!);
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
    const id = await policy("fanout-install");

    const api = await g.api();
    const answer = await api.call<{ jobIds: string[] }>("POST", `/api/mlpolicies/${id}/install`, {
      body: { deviceIds: devices.map((d) => d.id) },
    });
    expect(answer.status).toBe(202);
    expect(answer.body.jobIds).toHaveLength(4);
    const done = await g.waitForJobs(answer.body.jobIds, "complete");
    for (const job of done) {
      expect(job.target_hash).not.toBeNull();
      expect(job.sent_hash).toBe(job.target_hash);
    }
    await expectCompiledAsToday(devices, ["voice"]);
    for (const [i, d] of devices.entries()) {
      const row = await g.database.db
        .selectFrom("devices")
        .select("desired_hash")
        .where("id", "=", d.id)
        .executeTakeFirstOrThrow();
      expect(done.find((j) => j.device_id === d.id)!.target_hash).toBe(row.desired_hash);
      await waitUntil(
        () => fleet.device(i).appliedHash,
        (h) => h === row.desired_hash,
      );
    }

    // Uninstalling goes the same way: back to a config without the policy.
    const removed = await api.call<{ jobIds: string[] }>("POST", `/api/mlpolicies/${id}/uninstall`, { body: { filter: [] } });
    expect(removed.status).toBe(202);
    expect(removed.body.jobIds).toHaveLength(4);
    await g.waitForJobs(removed.body.jobIds, "complete");
    await expectCompiledAsToday(devices, null);
  });

  it("a fan-out committed but not compiled is neither sent nor settled, and the next start finishes it", async () => {
    const { devices } = await g.fleet(3);
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
    const before = new Map(
      (
        await g.database.db
          .selectFrom("devices")
          .select(["id", "desired_hash"])
          .where(
            "id",
            "in",
            devices.map((d) => d.id),
          )
          .execute()
      ).map((r) => [r.id, r.desired_hash]),
    );
    const id = await policy("fanout-crash");
    // As if the server stopped right after answering: its recompiler never runs (and sweeps no more).
    await (g.server.deps.recompiler as Recompiler).close();
    const { jobIds } = await installMlPolicy(systemCtx(g.server.deps, g.org), id, {
      deviceIds: devices.map((d) => d.id),
    } as never);
    expect(jobIds).toHaveLength(3);
    let jobs = await g.jobs(jobIds);
    expect(jobs.every((j) => j.state === "queued" && j.target_hash === null)).toBe(true);
    const marked = await g.database.db
      .selectFrom("devices")
      .select(["id", "desired_stale", "desired_hash"])
      .where(
        "id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    for (const m of marked) {
      expect(m.desired_stale).toBe(true);
      expect(m.desired_hash).toBe(before.get(m.id));
    }
    // Wake the dispatchers (as any change would) while the devices report the old hash, their desired one until
    // the compile: the target-less jobs must not go out with the old config nor complete by that report.
    for (const d of devices)
      await g.database.db.executeQuery({ sql: "select pg_notify('tern_jobs', $1)", parameters: [d.id] } as never);
    await new Promise((r) => setTimeout(r, 1500));
    jobs = await g.jobs(jobIds);
    expect(jobs.map((j) => [j.state, j.target_hash, j.sent_hash])).toEqual(jobIds.map(() => ["queued", null, null]));

    await g.restart();
    const done = await g.waitForJobs(jobIds, "complete", 20_000);
    expect(done.every((j) => j.attempts === 1 && j.target_hash !== null)).toBe(true);
    await expectCompiledAsToday(devices, ["voice"]);
    for (const d of devices) {
      const row = await g.database.db
        .selectFrom("devices")
        .select("desired_hash")
        .where("id", "=", d.id)
        .executeTakeFirstOrThrow();
      expect(row.desired_hash).not.toBe(before.get(d.id));
    }
  });
});
