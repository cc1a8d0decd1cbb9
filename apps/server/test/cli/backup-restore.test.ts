/**
 * `tern-server backup` and `restore` as an operator runs them: a server with
 * a registered, approved, connected simulated device and a config change is
 * backed up (the embedded database with the server stopped, PostgreSQL while
 * it runs), restored into a fresh data directory (and a fresh database), and
 * started on the same address: the device comes back by itself, with the same
 * desired and applied config, every job complete, and a new change reaches it
 * (so the restored server key opens its sealed config).
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Device, Job } from "@tern/protocol";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { afterAll, describe, expect, it } from "vitest";
import {
  freePort,
  freshServerPlace,
  lines,
  randomKey,
  runTernServer,
  type ServeProcess,
  type ServerPlace,
  startServe,
} from "../support/cli.ts";
import { FAST_GATEWAY_ENV, waitUntil } from "../support/gateway.ts";
import { type AdminClient, adminClient, onboardFleet, TEST_ADMIN } from "../support/onboarding.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const ADMIN_ENV = { TERN_ADMIN_EMAIL: TEST_ADMIN.email, TERN_ADMIN_PASSWORD: TEST_ADMIN.password };

async function waitForJobs(api: AdminClient, ids: string[]): Promise<void> {
  for (const id of ids)
    await waitUntil(
      () => api.call<Job>("GET", `/api/jobs/${id}`),
      (r) => r.body.state === "complete" || r.body.state === "failed",
      60_000,
      `job ${id}`,
    ).then((r) => expect(r.body.state).toBe("complete"));
}

describe("tern-server backup and restore", { timeout: 400_000 }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it("a restore into a fresh place brings the device back online with its config and jobs", async () => {
    const port = String(await freePort());
    const a: ServerPlace = await freshServerPlace();
    cleanups.push(() => a.cleanup());
    const envA = { ...a.env, ...ADMIN_ENV, ...FAST_GATEWAY_ENV, PORT: port };
    let serve: ServeProcess = startServe(["serve"], { env: envA });
    cleanups.push(() => serve.stop());
    const url = await serve.listening;

    let api = await adminClient(url);
    const onboarded = await onboardFleet(api, url, 1, { statusIntervalMs: 1_000 });
    const fleet: Simulator = onboarded.fleet;
    cleanups.push(() => fleet.stop());
    const device = onboarded.devices[0]!;
    await waitForJobs(api, device.jobIds);
    const change = await api.call<{ jobIds: string[] }>("PUT", `/api/devices/${device.id}`, {
      body: { staticRoutes: [{ destination: "192.168.50.0/24", gateway: "100.64.0.1", ifname: "eth0" }] },
    });
    expect(change.status).toBe(202);
    await waitForJobs(api, change.body.jobIds);
    const before = (await api.call<Device>("GET", `/api/devices/${device.id}`)).body;
    expect(before).toMatchObject({ isApproved: true, connection: "connected" });
    expect(before.appliedHash).toBe(before.desiredHash);
    expect(fleet.device(0).appliedHash).toBe(before.desiredHash);

    const archive = path.join(path.dirname(a.dataDir), "backup.tar.gz");
    if (testDatabaseKind() === "pglite") {
      const refused = await runTernServer(["backup", archive], { env: a.env });
      expect(refused.code).toBe(1);
      expect(lines(refused.stderr)).toEqual([
        expect.stringMatching(/a Tern server \(pid \d+\) is running on the embedded database.*stop it first/),
      ]);
      expect(await serve.stop()).toBe(0);
    }
    const backup = await runTernServer(["backup", archive], { env: a.env });
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backup written to ${archive}`);
    expect(backup.stderr).toMatch(/WARNING: the archive holds the server key/);
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    if (testDatabaseKind() === "postgres") expect(await serve.stop()).toBe(0);

    const b: ServerPlace = await freshServerPlace();
    cleanups.push(() => b.cleanup());
    const restored = await runTernServer(["restore", archive], { env: b.env });
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain("devices 1");
    const keyFile = path.join(b.dataDir, "secret.key");
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(keyFile, "utf8")).toBe(await readFile(path.join(a.dataDir, "secret.key"), "utf8"));
    const again = await runTernServer(["restore", archive], { env: b.env });
    expect(again.code).toBe(1);
    expect(lines(again.stderr)).toEqual([expect.stringMatching(/is not empty.*pass --force/)]);
    const forced = await runTernServer(["restore", "--force", archive], { env: b.env });
    expect(forced.code, forced.stderr).toBe(0);
    if (testDatabaseKind() === "pglite") {
      expect(forced.stdout).toMatch(/the database it replaced is kept in .*pgdata\.replaced-/);
      expect((await readdir(b.dataDir)).filter((e) => e.startsWith("pgdata.replaced-"))).toHaveLength(1);
    }

    // Without the key in the archive, a restore needs the right key from elsewhere.
    const keyless = path.join(path.dirname(a.dataDir), "keyless.tar.gz");
    const noKey = await runTernServer(["backup", "--no-key", keyless], { env: a.env });
    expect(noKey.code).toBe(0);
    expect(noKey.stderr).toMatch(/WARNING: the archive does NOT hold the server key/);
    const c: ServerPlace = await freshServerPlace();
    cleanups.push(() => c.cleanup());
    const refused = await runTernServer(["restore", keyless], { env: c.env });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([
      expect.stringMatching(/the backup holds no server key .*; set TERN_SECRET_KEY to the old server's key/),
    ]);
    const wrongKey = await runTernServer(["restore", keyless], { env: { ...c.env, TERN_SECRET_KEY: randomKey() } });
    expect(wrongKey.code).toBe(1);
    expect(lines(wrongKey.stderr)).toEqual([expect.stringMatching(/TERN_SECRET_KEY is not the key of the backed-up server/)]);
    const oldKey = (await readFile(path.join(a.dataDir, "secret.key"), "utf8")).trim();
    const rightKey = await runTernServer(["restore", keyless], { env: { ...c.env, TERN_SECRET_KEY: oldKey } });
    expect(rightKey.code).toBe(0);
    expect(rightKey.stdout).toContain("server key: TERN_SECRET_KEY (the backup's key)");

    serve = startServe(["serve"], { env: { ...b.env, ...FAST_GATEWAY_ENV, PORT: port } });
    expect(await serve.listening).toBe(url);
    api = await adminClient(url);
    const after = await waitUntil(
      () => api.call<Device>("GET", `/api/devices/${device.id}`),
      (r) => r.body.connection === "connected" && fleet.device(0).ready,
      60_000,
      "the device reconnected to the restored server",
    );
    expect(after.body).toMatchObject({ isApproved: true, desiredHash: before.desiredHash, appliedHash: before.desiredHash });
    expect(after.body.staticRoutes).toEqual(before.staticRoutes);
    expect(fleet.device(0).appliedHash).toBe(before.desiredHash);
    const jobs = await api.call<Job[]>("GET", "/api/jobs", { query: { limit: 100 } });
    expect(jobs.body.length).toBeGreaterThanOrEqual(2);
    expect(jobs.body.filter((j) => j.state !== "complete")).toEqual([]);

    // A change made on the restored server reaches the device: the dispatcher opened its sealed config with the restored key.
    const next = await api.call<{ jobIds: string[] }>("PUT", `/api/devices/${device.id}`, {
      body: { staticRoutes: [{ destination: "192.168.60.0/24", gateway: "100.64.0.1", ifname: "eth0" }] },
    });
    expect(next.status).toBe(202);
    await waitForJobs(api, next.body.jobIds);
    const final = (await api.call<Device>("GET", `/api/devices/${device.id}`)).body;
    expect(final.appliedHash).toBe(final.desiredHash);
    expect(final.desiredHash).not.toBe(before.desiredHash);
    expect(fleet.device(0).appliedHash).toBe(final.desiredHash);
    expect(await serve.stop()).toBe(0);
  });
});
