/** POST /api/devices/approve: bulk approval by ids or filter, per-device results, one job group. */
import { randomUUID } from "node:crypto";
import type { Job } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { insertTestTunnel, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
interface Approved {
  results: { id: string; status: string; code?: string; jobs?: number }[];
  approved: number;
  alreadyApproved: number;
  refused: number;
  jobGroup: string | null;
  jobs: number;
}

describe("POST /api/devices/approve", () => {
  const t = useTestServer();
  const approve = <T = Approved>(body: unknown, token = t.admin.token) =>
    t.api<T>("POST", "/api/devices/approve", { token, body });
  const isApproved = async (id: string) =>
    (await t.database.db.selectFrom("devices").select("is_approved").where("id", "=", id).executeTakeFirstOrThrow()).is_approved;

  it("approves the devices named, each with its whole-config job, in one job group that Location lists", async () => {
    const pending = [
      await insertValidDevice(t, { approved: false }),
      await insertValidDevice(t, { approved: false }),
      await insertValidDevice(t, { approved: false }),
    ];
    const already = await insertValidDevice(t, { approved: true });
    const res = await approve({ deviceIds: [...pending.map((d) => d.id), already.id] });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ approved: 3, alreadyApproved: 1, refused: 0, jobs: 3 });
    expect(res.body.results.find((r) => r.id === already.id)).toEqual({ id: already.id, status: "alreadyApproved" });
    for (const d of pending) {
      expect(res.body.results.find((r) => r.id === d.id)).toEqual({ id: d.id, status: "approved", jobs: 1 });
      expect(await isApproved(d.id)).toBe(true);
    }
    expect(res.headers.get("location")).toBe(`/api/jobs?group=${res.body.jobGroup}`);
    const listed = await t.api<Job[]>("GET", res.headers.get("location")!, { token: t.admin.token });
    expect(listed.status).toBe(200);
    expect(listed.body.map((j) => j.device.id).sort()).toEqual(pending.map((d) => d.id).sort());
    // Each approval is audited as the single approval is.
    const audits = await t.database.db
      .selectFrom("audit_log")
      .select("resource_id")
      .where("action", "=", "approve")
      .where(
        "resource_id",
        "in",
        pending.map((d) => d.id),
      )
      .execute();
    expect(audits).toHaveLength(3);
  });

  it("approves by filter (the list's {key, op, val}); again is alreadyApproved and 200 without a group", async () => {
    const tag = `bulk-${randomUUID().slice(0, 8)}`;
    const a = await insertValidDevice(t, { approved: false, name: `${tag}-a` });
    const b = await insertValidDevice(t, { approved: false, name: `${tag}-b` });
    const other = await insertValidDevice(t, { approved: false, name: "not-matched" });
    const filter = [{ key: "name", op: "contains", val: tag }];
    const res = await approve({ filter });
    expect(res.status, res.text).toBe(202);
    expect(res.body.results.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    expect(await isApproved(other.id)).toBe(false);
    const again = await approve({ filter });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ approved: 0, alreadyApproved: 2, jobGroup: null, jobs: 0 });
    expect(again.headers.get("location")).toBeNull();
  });

  it("refuses a device without an identity key with the single approval's code, and approves the others", async () => {
    const keyless = await insertValidDevice(t, { approved: false });
    await t.database.db.updateTable("devices").set({ public_key: null }).where("id", "=", keyless.id).execute();
    const fine = await insertValidDevice(t, { approved: false });
    const single = await t.api<ErrorBody>("PUT", `/api/devices/${keyless.id}`, {
      token: t.admin.token,
      body: { isApproved: true },
    });
    const res = await approve({ deviceIds: [keyless.id, fine.id] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ approved: 1, refused: 1 });
    expect(res.body.results.find((r) => r.id === keyless.id)).toMatchObject({ status: "refused", code: single.body.code });
    expect(single.body.code).toBe("CONFLICT");
    expect(await isApproved(keyless.id)).toBe(false);
    expect(await isApproved(fine.id)).toBe(true);
  });

  it("a batch approves exactly as one PUT does: same refusals, same job, same audit shape", async () => {
    // Pairs of devices alike: the first of each approved by PUT, the second by the bulk call.
    const single = [
      await insertValidDevice(t, { approved: false }),
      await insertValidDevice(t, { approved: false, wanIp: "10.100.7.2" }),
    ];
    const bulk = [
      await insertValidDevice(t, { approved: false }),
      await insertValidDevice(t, { approved: false, wanIp: "10.100.8.2" }),
    ];
    // Tunnels between pending devices are in the whole config each approval compiles.
    await insertTestTunnel(t, single[0]!, bulk[0]!);
    // An approval changes no interface or firewall: the LAN index keeps the rows registration wrote, untouched
    // (ctid: not deleted and written again), as for one PUT.
    const lanRows = (ids: string[]) =>
      sql<{ device_id: string; kind: string; subnet: string; ctid: string }>`
        select device_id, kind, subnet::text, ctid::text from device_lan_subnets
        where device_id = any(${`{${ids.join(",")}}`}::uuid[]) order by device_id, kind, subnet`
        .execute(t.database.db)
        .then((r) => r.rows);
    const lanBefore = await lanRows([...single, ...bulk].map((d) => d.id));
    expect(new Set(lanBefore.map((r) => r.device_id)).size).toBe(4);
    const put = [];
    for (const d of single)
      put.push(await t.api<ErrorBody>("PUT", `/api/devices/${d.id}`, { token: t.admin.token, body: { isApproved: true } }));
    expect(put[0]!.status, put[0]!.text).toBe(202);
    expect(put[1]!.status).toBe(400);
    const res = await approve({ deviceIds: bulk.map((d) => d.id) });
    expect(res.status, res.text).toBe(202);
    expect(await lanRows([...single, ...bulk].map((d) => d.id))).toEqual(lanBefore);
    expect(res.body.results.map((r) => r.id)).toEqual(bulk.map((d) => d.id));
    expect(res.body.results[0]).toEqual({ id: bulk[0]!.id, status: "approved", jobs: 1 });
    expect(res.body.results[1]).toMatchObject({ status: "refused", code: put[1]!.body.code });

    const jobOf = (id: string) =>
      t.database.db
        .selectFrom("jobs")
        .innerJoin("devices", "devices.id", "jobs.device_id")
        .select(["jobs.type", "jobs.state", "jobs.tasks", "jobs.target_hash", "devices.desired_hash", "devices.name"])
        .where("jobs.device_id", "=", id)
        .execute();
    const [a] = await jobOf(single[0]!.id);
    const [b] = await jobOf(bulk[0]!.id);
    expect(await jobOf(single[1]!.id)).toEqual([]);
    expect(await jobOf(bulk[1]!.id)).toEqual([]);
    // The PUT writes the device's change, its desired config and its job in one statement: the job targets the hash stored.
    expect(a).toMatchObject({ type: "modify", state: "queued", target_hash: a!.desired_hash });
    expect(b).toMatchObject({ type: a!.type, state: a!.state, target_hash: b!.desired_hash });
    expect(b!.tasks).toEqual([{ kind: "approve-device", summary: `approved ${b!.name}: full configuration` }]);
    expect(a!.tasks).toEqual([{ kind: "approve-device", summary: `approved ${a!.name}: full configuration` }]);
    // The whole config compiled: the tunnel to the other (pending) device is in both hashes' configs.
    const desired = await t.database.db
      .selectFrom("devices")
      .select(["id", "desired_tunnel_ids"])
      .where("id", "in", [single[0]!.id, bulk[0]!.id])
      .execute();
    for (const d of desired) expect(d.desired_tunnel_ids).toHaveLength(1);

    const auditOf = async (id: string) => {
      const row = await t.database.db
        .selectFrom("audit_log")
        .select(["action", "before", "after"])
        .where("resource_id", "=", id)
        .executeTakeFirstOrThrow();
      const shape = (d: unknown) => Object.keys(d as object).sort();
      const state = (d: unknown) => (d as { isApproved: boolean }).isApproved;
      return { action: row.action, keys: [shape(row.before), shape(row.after)], approved: [state(row.before), state(row.after)] };
    };
    expect(await auditOf(bulk[0]!.id)).toEqual(await auditOf(single[0]!.id));
    expect(await isApproved(bulk[1]!.id)).toBe(false);
  });

  it("the audit's after is the device as it then reads, also for a device whose config did not change", async () => {
    const device = await insertValidDevice(t, { approved: false });
    const auditAfter = async () =>
      (
        await t.database.db
          .selectFrom("audit_log")
          .select("after")
          .where("resource_id", "=", device.id)
          .where("action", "=", "approve")
          .orderBy("at", "desc")
          .executeTakeFirstOrThrow()
      ).after;
    const read = async () => (await t.api("GET", `/api/devices/${device.id}`, { token: t.admin.token })).body;

    const first = await approve({ deviceIds: [device.id] });
    expect(first.status, first.text).toBe(202);
    expect(await auditAfter()).toEqual(await read());
    const hash = (await read()) as { desiredHash: string };
    expect(hash.desiredHash).toMatch(/^[0-9a-f]{64}$/);

    // Unapproved and approved again: the same config compiles to the same hash, so no desired config is stored,
    // and the approval is still written (and its job queued, as for one PUT).
    const off = await t.api("PUT", `/api/devices/${device.id}`, { token: t.admin.token, body: { isApproved: false } });
    expect(off.status, off.text).toBeLessThan(300);
    expect(await isApproved(device.id)).toBe(false);
    const again = await approve({ deviceIds: [device.id] });
    expect(again.status, again.text).toBe(202);
    expect(again.body.results).toEqual([{ id: device.id, status: "approved", jobs: 1 }]);
    expect(await isApproved(device.id)).toBe(true);
    const now = (await read()) as { desiredHash: string; updatedAt: string };
    expect(now.desiredHash).toBe(hash.desiredHash);
    expect(await auditAfter()).toEqual(now);
  });

  it("refuses bad bodies with 400 and unknown ids with 404, approving nothing", async () => {
    const d = await insertValidDevice(t, { approved: false });
    const cases: [string, unknown][] = [
      ["neither", {}],
      ["both", { deviceIds: [d.id], filter: [] }],
      ["unknown field", { deviceIds: [d.id], force: true }],
      ["not a uuid", { deviceIds: ["nope"] }],
      ["empty ids", { deviceIds: [] }],
      ["bad filter op", { filter: [{ key: "name", op: "sounds-like", val: "x" }] }],
    ];
    for (const [label, body] of cases) {
      const res = await approve<ErrorBody>(body);
      expect(res.status, label).toBe(400);
      expect(res.body.code, label).toBe("VALIDATION_FAILED");
    }
    const unknownKey = await approve<ErrorBody>({ filter: [{ key: "publicKey", op: "==", val: "x" }] });
    expect(unknownKey.status).toBe(400);
    const missing = await approve<ErrorBody>({ deviceIds: [d.id, randomUUID()] });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("NOT_FOUND");
    expect(await isApproved(d.id)).toBe(false);
  });

  it("security: a viewer may not approve, another tenant's devices and job groups are not found", async () => {
    const d = await insertValidDevice(t, { approved: false });
    const viewer = await t.addMember("viewer");
    const forbidden = await approve<ErrorBody>({ deviceIds: [d.id] }, viewer.token);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe("FORBIDDEN");
    const tenant = await t.createTenant("bulk-other");
    const foreign = await approve<ErrorBody>({ deviceIds: [d.id] }, tenant.token);
    expect(foreign.status).toBe(404);
    // A filter only ever selects the caller's organization.
    const all = await approve({ filter: [] }, tenant.token);
    expect(all.status).toBe(200);
    expect(all.body.results).toEqual([]);
    expect(await isApproved(d.id)).toBe(false);

    const mine = await approve({ deviceIds: [d.id] });
    expect(mine.status).toBe(202);
    const theirs = await t.api<Job[]>("GET", `/api/jobs?group=${mine.body.jobGroup}`, { token: tenant.token });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
  });
});
