/**
 * PUT /api/devices/{id} builds its answer and audit record without reading the device again, checks
 * the identity from the locked row, reads the organization's tunnel range and path labels in one
 * statement and leaves the LAN index alone when interfaces and firewall did not change (issue 14:
 * fewer statements per approval). These tests hold the result to what a fresh read shows: the
 * answer, the audit's before/after, the jobs (device and far ends) and the LAN index rows.
 */
import type { Device } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestTunnel, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type Accepted = { jobIds: string[] };

describe("PUT /api/devices/{id}: answer, jobs and audit as a fresh read shows them", () => {
  const t = useTestServer();
  const put = <T>(id: string, body: unknown) => t.api<T>("PUT", `/api/devices/${id}`, { token: t.admin.token, body });
  const get = async (id: string) => {
    const res = await t.api<Device>("GET", `/api/devices/${id}`, { token: t.admin.token });
    expect(res.status).toBe(200);
    return res.body;
  };
  const lastAudit = (id: string) =>
    t.database.db
      .selectFrom("audit_log")
      .select(["action", "before", "after"])
      .where("resource_id", "=", id)
      .orderBy("at", "desc")
      .executeTakeFirstOrThrow();
  const lanRows = (id: string) =>
    t.database.db
      .selectFrom("device_lan_subnets")
      .select(["kind", "subnet", "organization_id"])
      .where("device_id", "=", id)
      .orderBy("kind")
      .orderBy("subnet")
      .execute();
  const jobsOf = (ids: string[]) =>
    t.database.db
      .selectFrom("jobs")
      .select(["id", "device_id", "type", "state", "tasks", "target_hash", "created_by"])
      .where("id", "in", ids)
      .orderBy("device_id")
      .execute();

  it("an approval: audit before/after equal the reads before and after, one whole-config job at the device's desired hash", async () => {
    const device = await insertValidDevice(t, { approved: false });
    const far = await insertValidDevice(t, { approved: true });
    await insertTestTunnel(t, device, far);
    const before = await get(device.id);
    const lanBefore = await lanRows(device.id);

    const res = await put<Accepted>(device.id, { isApproved: true });
    expect(res.status, res.text).toBe(202);
    const after = await get(device.id);
    expect(after.isApproved).toBe(true);
    expect(after.desiredHash).not.toBeNull();
    const audit = await lastAudit(device.id);
    expect(audit.action).toBe("approve");
    expect(audit.before).toEqual(JSON.parse(JSON.stringify(before)));
    expect(audit.after).toEqual(JSON.parse(JSON.stringify(after)));
    // Approval changes nothing a far end reads: the device's own job only.
    const jobs = await jobsOf(res.body.jobIds);
    expect(jobs).toEqual([
      {
        id: res.body.jobIds[0],
        device_id: device.id,
        type: "modify",
        state: "queued",
        tasks: [{ kind: "approve-device", summary: `approved ${device.name}: full configuration` }],
        target_hash: after.desiredHash,
        created_by: t.admin.email,
      },
    ]);
    // Interfaces and firewall unchanged: the LAN index rows are the same.
    expect(await lanRows(device.id)).toEqual(lanBefore);
    expect(lanBefore.length).toBeGreaterThan(0);
  });

  it("a LAN change: the 202's device state, far-end jobs and LAN index follow the change; a rename answers 200 with the fresh read", async () => {
    const device = await insertValidDevice(t, { approved: false });
    const far = await insertValidDevice(t, { approved: true });
    await insertTestTunnel(t, device, far);
    expect((await put<Accepted>(device.id, { isApproved: true })).status).toBe(202);
    const before = await get(device.id);

    const lan = device.lan;
    const res = await put<Accepted>(device.id, {
      interfaces: [{ devId: lan.devId, name: lan.name, type: lan.type, isAssigned: true, IPv4: "198.18.77.1", IPv4Mask: 24 }],
    });
    expect(res.status, res.text).toBe(202);
    const after = await get(device.id);
    const audit = await lastAudit(device.id);
    expect(audit.action).toBe("update");
    expect(audit.before).toEqual(JSON.parse(JSON.stringify(before)));
    expect(audit.after).toEqual(JSON.parse(JSON.stringify(after)));
    expect(after.desiredHash).not.toBe(before.desiredHash);
    const jobs = await jobsOf(res.body.jobIds);
    expect(jobs.map((j) => j.device_id).sort()).toEqual([device.id, far.id].sort());
    expect(jobs.find((j) => j.device_id === device.id)!.target_hash).toBe(after.desiredHash);
    expect((await lanRows(device.id)).map((r) => r.subnet)).toContain("198.18.77.0/24");

    const renamed = await t.api<Device>("PUT", `/api/devices/${device.id}`, {
      token: t.admin.token,
      body: { description: "rack 7" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual(await get(device.id));
    expect((await lastAudit(device.id)).after).toEqual(JSON.parse(JSON.stringify(renamed.body)));
  });

  it("still refuses to approve a device without a key, and stores nothing", async () => {
    const device = await insertValidDevice(t, { approved: false });
    await t.database.db.updateTable("devices").set({ public_key: null }).where("id", "=", device.id).execute();
    const res = await put<{ code: string }>(device.id, { isApproved: true });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("CONFLICT");
    expect((await get(device.id)).isApproved).toBe(false);
    expect(await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", device.id).execute()).toEqual([]);
  });
});
