import { randomUUID } from "node:crypto";
import { configHash, DEFAULT_MONITORING, DeviceConfig, type DeviceUpdate } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { compileDeviceConfig } from "../../src/compile/index.ts";
import { toJson } from "../../src/db/json.ts";
import { inTransaction, systemCtx } from "../../src/services/context.ts";
import { loadCompileInputs, queueConfigJobs } from "../../src/services/desired-config.ts";
import { readDesiredConfig } from "../../src/services/desired-config-seal.ts";
import { updateDevice } from "../../src/services/devices/update.ts";
import { insertTestTunnel } from "../support/device-fixtures.ts";
import { insertTestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

describe("desired config and jobs", () => {
  const t = useTestServer();

  it("compiles, stores the desired config and queues one job per changed device", async () => {
    const a = await insertTestDevice(t, { wanIp: "10.100.1.2", lanIp: "192.168.50.1" });
    const b = await insertTestDevice(t, { wanIp: "10.100.2.2", lanIp: "192.168.60.1" });
    const tunnelId = randomUUID();
    await t.database.db
      .insertInto("tunnels")
      .values({
        id: tunnelId,
        organization_id: t.admin.orgId,
        num: 1,
        device_a: a.id,
        interface_a: a.wan.id,
        device_b: b.id,
        interface_b: b.wan.id,
        endpoint_key: `${a.id}:${a.wan.id}|${b.id}:${b.wan.id}`,
        psk_enc: t.deps.keyring.encrypt("tunnel-secret-0001", tunnelId),
        notifications: toJson({ rtt: null, dropRate: null }),
      })
      .execute();

    const ctx = systemCtx(t.deps, { id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" });
    const inputs = await loadCompileInputs(t.database.db, t.deps.keyring, t.admin.orgId, [a.id, b.id]);
    expect(inputs.get(a.id)?.tunnels).toHaveLength(1);
    expect(inputs.get(b.id)?.tunnels[0]).toMatchObject({ kind: "device", psk: "tunnel-secret-0001" });

    const first = await inTransaction(ctx, (tx) =>
      queueConfigJobs(tx, { deviceIds: [a.id, b.id], type: "tunnels", tasks: [{ kind: "add-tunnel", summary: "tunnel 1" }] }),
    );
    expect(first.jobIds).toHaveLength(2);
    const rows = await t.database.db.selectFrom("devices").select(["id", "desired_hash"]).execute();
    for (const row of rows) {
      const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, row.id));
      expect(configHash(config)).toBe(row.desired_hash);
      expect(config.tunnels.map((x) => x.id)).toEqual([tunnelId]);
    }
    const jobs = await t.database.db.selectFrom("jobs").selectAll().execute();
    expect(jobs.map((j) => [j.device_id, j.state, j.type]).sort()).toEqual(
      [
        [a.id, "queued", "tunnels"],
        [b.id, "queued", "tunnels"],
      ].sort(),
    );
    expect(jobs.find((j) => j.device_id === a.id)?.target_hash).toBe(rows.find((r) => r.id === a.id)?.desired_hash);

    // Nothing changed: no job, unless forced.
    const again = await inTransaction(ctx, (tx) => queueConfigJobs(tx, { deviceIds: [a.id, b.id], type: "modify", tasks: [] }));
    expect(again.jobIds).toEqual([]);
    const forced = await inTransaction(ctx, (tx) =>
      queueConfigJobs(tx, { deviceIds: [a.id], type: "sync", tasks: [], force: true }),
    );
    expect(forced.jobIds).toHaveLength(1);
  });

  it("a device update compiles what a fresh load compiles, though it reads the surroundings before its change", async () => {
    // updateDevice loads the tunnels, far ends, policies… once, validates against them and hands them to the compile.
    const a = await insertTestDevice(t, { wanIp: "10.200.11.2", lanIp: "192.168.71.1" });
    const b = await insertTestDevice(t, { wanIp: "10.200.12.2", lanIp: "192.168.72.1" });
    const { id: tunnelId } = await insertTestTunnel(t, a, b, { num: 7 });
    // A policy the device did not have when the surroundings were loaded: the compile must still get it.
    const policyId = randomUUID();
    await t.database.db
      .insertInto("mlpolicies")
      .values({ id: policyId, organization_id: t.admin.orgId, name: "new policy", rules: toJson([]) })
      .execute();
    const ctx = systemCtx(t.deps, { id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" });
    const body = { name: "renamed-a", policies: { multilink: policyId } } as DeviceUpdate;
    const { jobIds } = await updateDevice(ctx, { id: a.id, body });
    expect(jobIds).toHaveLength(2); // a itself, and b whose tunnel names a

    const fresh = await loadCompileInputs(t.database.db, t.deps.keyring, t.admin.orgId, [a.id, b.id]);
    const stored = await t.database.db.selectFrom("devices").select(["id", "desired_hash"]).execute();
    for (const id of [a.id, b.id]) {
      const { hash } = compileDeviceConfig(fresh.get(id)!);
      expect(stored.find((r) => r.id === id)?.desired_hash).toBe(hash);
    }
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, a.id));
    expect(config.policy).toEqual({ rules: [] });
    expect(config.tunnels.map((x) => x.id)).toEqual([tunnelId]);
  });

  it("gives every config the server's probe settings (TERN_PROBE_*); a change of them queues a job", async () => {
    const a = await insertTestDevice(t, { wanIp: "10.100.1.2", lanIp: "192.168.50.1" });
    const org = { id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" };
    const monitoring = async () => DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, a.id)).monitoring;
    const queue = (config: typeof t.deps.config) =>
      inTransaction(systemCtx({ ...t.deps, config }, org), (tx) =>
        queueConfigJobs(tx, { deviceIds: [a.id], type: "modify", tasks: [{ kind: "onboard", summary: "probes" }] }),
      );

    expect((await queue(t.deps.config)).jobIds).toHaveLength(1);
    expect(await monitoring()).toEqual(DEFAULT_MONITORING);
    const faster = { ...t.deps.config, TERN_PROBE_INTERVAL_MS: 100, TERN_PROBE_WINDOW: 50 };
    expect((await queue(faster)).jobIds).toHaveLength(1);
    expect(await monitoring()).toEqual({ ...DEFAULT_MONITORING, probeIntervalMs: 100, windowSize: 50 });
    // The same settings again: nothing changed, nothing queued.
    expect((await queue(faster)).jobIds).toHaveLength(0);
  });

  it("refuses to run outside a transaction", async () => {
    const ctx = systemCtx(t.deps, { id: t.admin.orgId, accountId: t.admin.accountId, name: "Default organization" });
    await expect(queueConfigJobs(ctx, { deviceIds: [], type: "modify", tasks: [] })).rejects.toThrow(/inside the transaction/);
  });
});
