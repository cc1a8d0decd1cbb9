/** DELETE /api/devices/{id} and DELETE /api/devices: VRRP refusal or removal, tunnels and their far ends' jobs, bulk by filter. */
import { randomUUID } from "node:crypto";
import type { Job } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  insertTestJob,
  insertTestTunnel,
  insertTestVrrpGroup,
  insertValidDevice,
} from "../../../test/support/device-fixtures.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; error: string; details: { path: string; message: string }[] };
type Deleted = { deviceIds: string[]; jobIds: string[] };

async function exists(t: TestServer, table: "devices" | "tunnels" | "vrrp_groups" | "jobs", id: string) {
  return (await t.database.db.selectFrom(table).select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
}

describe("DELETE /api/devices/{id}", () => {
  const t = useTestServer();
  const del = <T = unknown>(id: string, query: Record<string, string> = {}) =>
    t.api<T>("DELETE", `/api/devices/${id}`, { token: t.admin.token, query });

  it("deletes a device with its jobs and notifications: 204 when no other device needs a change", async () => {
    const device = await insertValidDevice(t);
    const job = await insertTestJob(t, device.id);
    const res = await del(device.id);
    expect(res.status).toBe(204);
    expect(await exists(t, "devices", device.id)).toBe(false);
    expect(await exists(t, "jobs", job)).toBe(false);
    expect((await t.api("GET", `/api/devices/${device.id}`, { token: t.admin.token })).status).toBe(404);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "before"])
      .where("resource_id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: "delete", before: { id: device.id, name: device.name } });
    const again = await del<ErrorBody>(device.id);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("NOT_FOUND");
  });

  it("deletes the device's tunnels; the far ends get deltunnels jobs (202 + Location)", async () => {
    const a = await insertValidDevice(t, { name: "gone" });
    const b = await insertValidDevice(t, { name: "far-1" });
    const c = await insertValidDevice(t, { name: "far-2", approved: false });
    const ab = await insertTestTunnel(t, a, b, { num: 11 });
    const ac = await insertTestTunnel(t, a, c, { num: 12 });
    const bc = await insertTestTunnel(t, b, c, { num: 13 });
    const res = await del<{ jobIds: string[] }>(a.id);
    expect(res.status).toBe(202);
    // c is not approved: no job for it.
    expect(res.body.jobIds).toHaveLength(1);
    const jobs = await t.api<Job[]>("GET", res.headers.get("location")!, { token: t.admin.token });
    expect(jobs.body[0]).toMatchObject({
      type: "deltunnels",
      device: { id: b.id, name: "far-1" },
      tasks: [{ kind: "delete-tunnel", summary: "tunnel 11 to deleted device gone" }],
    });
    expect(await exists(t, "tunnels", ab.id)).toBe(false);
    expect(await exists(t, "tunnels", ac.id)).toBe(false);
    expect(await exists(t, "tunnels", bc.id)).toBe(true);
    const audited = await t.database.db.selectFrom("audit_log").select("resource_id").where("resource", "=", "tunnels").execute();
    expect(audited.map((r) => r.resource_id)).toEqual(expect.arrayContaining([ab.id, ac.id]));
  });

  it("a device in a VRRP group is refused with VRRP_INSTALLED_ON_DEVICE naming the group, and nothing is deleted", async () => {
    const a = await insertValidDevice(t, { name: "vrrp-main", lanIp: "10.220.0.2" });
    const b = await insertValidDevice(t, { name: "vrrp-backup", lanIp: "10.220.0.3" });
    const other = await insertValidDevice(t, { name: "vrrp-far" });
    const tunnel = await insertTestTunnel(t, a, other, { num: 21 });
    const group = await insertTestVrrpGroup(t, {
      name: "hq-gateway",
      virtualRouterId: 30,
      virtualIp: "10.220.0.1",
      members: [a, b],
    });
    for (const query of [{}, { removeVrrp: "false" }] as Record<string, string>[]) {
      const res = await del<ErrorBody>(a.id, query);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("VRRP_INSTALLED_ON_DEVICE");
      expect(res.body.error).toContain("hq-gateway");
      expect(res.body.error).toContain("removeVrrp=true");
      expect(res.body.details).toEqual([{ path: "removeVrrp", message: "device vrrp-main is in VRRP group hq-gateway" }]);
    }
    expect(await exists(t, "devices", a.id)).toBe(true);
    expect(await exists(t, "tunnels", tunnel.id)).toBe(true);
    expect(await exists(t, "vrrp_groups", group)).toBe(true);
    const bad = await del<ErrorBody>(a.id, { removeVrrp: "yes" });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("removeVrrp");
  });

  it("with removeVrrp=true the device leaves its groups; remaining members get vrrp jobs; an emptied group is deleted", async () => {
    const a = await insertValidDevice(t, { name: "pair-a", lanIp: "10.230.0.2" });
    const b = await insertValidDevice(t, { name: "pair-b", lanIp: "10.230.0.3" });
    const solo = await insertValidDevice(t, { name: "solo", lanIp: "10.231.0.2" });
    const pair = await insertTestVrrpGroup(t, { name: "pair", virtualRouterId: 40, virtualIp: "10.230.0.1", members: [a, b] });
    const single = await insertTestVrrpGroup(t, {
      name: "single",
      virtualRouterId: 41,
      virtualIp: "10.231.0.1",
      members: [solo],
    });

    const res = await del<{ jobIds: string[] }>(a.id, { removeVrrp: "true" });
    expect(res.status).toBe(202);
    const jobs = await t.api<Job[]>("GET", res.headers.get("location")!, { token: t.admin.token });
    expect(jobs.body).toHaveLength(1);
    expect(jobs.body[0]).toMatchObject({ type: "vrrp", device: { id: b.id }, tasks: [{ kind: "vrrp-member-removed" }] });
    const members = await t.database.db.selectFrom("vrrp_members").select("device_id").where("group_id", "=", pair).execute();
    expect(members.map((m) => m.device_id)).toEqual([b.id]);

    expect((await del(solo.id, { removeVrrp: "true" })).status).toBe(204);
    expect(await exists(t, "vrrp_groups", single)).toBe(false);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "resource_id"])
      .where("resource", "=", "vrrp")
      .orderBy("at")
      .execute();
    expect(audit.map((e) => [e.action, e.resource_id])).toEqual([
      ["update", pair],
      ["delete", single],
    ]);
  });
});

describe("DELETE /api/devices (by filter)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  const del = <T = Deleted>(query: Record<string, string>) => t.api<T>("DELETE", "/api/devices", { token: tenant.token, query });
  const filter = (key: string, op: string, val: unknown) => JSON.stringify([{ key, op, val }]);
  const remaining = async () =>
    (await t.api<{ name: string }[]>("GET", "/api/devices", { token: tenant.token })).body.map((d) => d.name).sort();

  async function fleet(names: string[]): Promise<TestDevice[]> {
    tenant = await t.createTenant(`Bulk ${randomUUID().slice(0, 6)}`);
    const out: TestDevice[] = [];
    for (const name of names) out.push(await insertValidDevice(t, { name, orgId: tenant.orgId }));
    return out;
  }

  it("refuses an empty selection unless all=true", async () => {
    await fleet(["keep-1", "keep-2"]);
    const res = await del<ErrorBody>({});
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details[0]?.path).toBe("filter");
    expect(await remaining()).toEqual(["keep-1", "keep-2"]);
    const all = await del({ all: "true" });
    expect(all.status).toBe(200);
    expect(all.body.deviceIds).toHaveLength(2);
    expect(await remaining()).toEqual([]);
  });

  it("deletes every device matching the filter (no paging), and only in the caller's organization", async () => {
    const names = Array.from({ length: 5 }, (_, i) => `lab-${i}`).concat(["prod-1"]);
    const devices = await fleet(names);
    const foreign = await insertValidDevice(t, { name: "lab-foreign" });
    // There is no paging here: `limit` is not a parameter of this route, so it is refused, not silently dropped.
    const paged = await del({ filter: filter("name", "contains", "lab-"), limit: "1" });
    expect(paged.status).toBe(400);
    expect((paged.body as unknown as { code: string }).code).toBe("VALIDATION_FAILED");
    const res = await del({ filter: filter("name", "contains", "lab-") });
    expect(res.status).toBe(200);
    expect(res.body.deviceIds.sort()).toEqual(
      devices
        .slice(0, 5)
        .map((d) => d.id)
        .sort(),
    );
    expect(res.body.jobIds).toEqual([]);
    expect(await remaining()).toEqual(["prod-1"]);
    expect(await exists(t, "devices", foreign.id)).toBe(true);
    // Matching nothing is not an error.
    const none = await del({ filter: filter("name", "==", "nothing") });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ deviceIds: [], jobIds: [] });
  });

  it("ids select devices; the far ends of their tunnels get jobs (202 with Location)", async () => {
    const [a, b, c] = await fleet(["x-a", "x-b", "x-c"]);
    await insertTestTunnel(t, a!, c!, { num: 1, orgId: tenant.orgId });
    await insertTestTunnel(t, b!, c!, { num: 2, orgId: tenant.orgId });
    const res = await del({ ids: `${a!.id},${b!.id}` });
    expect(res.status).toBe(202);
    expect(res.body.deviceIds.sort()).toEqual([a!.id, b!.id].sort());
    expect(res.body.jobIds).toHaveLength(1);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds[0]}`);
    const job = await t.api<Job>("GET", `/api/jobs/${res.body.jobIds[0]}`, { token: tenant.token });
    expect(job.body).toMatchObject({ type: "deltunnels", device: { id: c!.id } });
    expect(job.body.tasks.map((x) => x.summary).sort()).toEqual([
      "tunnel 1 to deleted device x-a",
      "tunnel 2 to deleted device x-b",
    ]);
    expect(await remaining()).toEqual(["x-c"]);
  });

  it("all or nothing: one device in a VRRP group refuses the whole deletion unless removeVrrp=true", async () => {
    const [a, b] = await fleet(["v-a", "v-b", "v-c"]);
    await insertTestVrrpGroup(t, {
      name: "grp",
      virtualRouterId: 9,
      virtualIp: "10.1.0.200",
      members: [a!],
      orgId: tenant.orgId,
    });
    const refused = await del<ErrorBody>({ filter: filter("name", "in", ["v-a", "v-b"]) });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("VRRP_INSTALLED_ON_DEVICE");
    expect(await remaining()).toEqual(["v-a", "v-b", "v-c"]);
    const ok = await del({ filter: filter("name", "in", ["v-a", "v-b"]), removeVrrp: "true" });
    expect(ok.status).toBe(200);
    expect(ok.body.deviceIds.sort()).toEqual([a!.id, b!.id].sort());
    expect(await remaining()).toEqual(["v-c"]);
  });

  it("a bad filter is 400 naming it", async () => {
    await fleet(["f-1"]);
    const res = await del<ErrorBody>({ filter: filter("secret", "==", 1) });
    expect(res.status).toBe(400);
    expect(res.body.details[0]?.path).toBe("filter.0.key");
    expect(await remaining()).toEqual(["f-1"]);
  });
});
