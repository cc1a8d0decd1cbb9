/** DELETE /api/tunnels/{id} and DELETE /api/tunnels (by filter). */
import { DeviceConfig, type TunnelsDeleted } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  desiredConfig,
  type ErrorBody,
  peerTunnelBody,
  tunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";

describe("DELETE /api/tunnels/{id}", () => {
  const t = useTestServer();

  it("deletes the tunnel, removes it from both ends' desired configs and queues deltunnels jobs", async () => {
    const a = await wanDevice(t, { name: "del-a" });
    const b = await wanDevice(t, { name: "del-b" });
    const created = await createTunnels(t, tunnelBody(a, b));
    const id = created.tunnels[0]!.id;
    const res = await t.api<TunnelsDeleted>("DELETE", `/api/tunnels/${id}`, { token: t.admin.token });
    expect(res.status, res.text).toBe(202);
    expect(res.body.deleted).toEqual([id]);
    expect(res.body.jobIds).toHaveLength(2);
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${res.body.jobIds.join(",")}`);
    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds).execute();
    for (const job of jobs) {
      expect(job.type).toBe("deltunnels");
      expect(job.tasks).toEqual([{ kind: "remove-tunnel", summary: `tunnel 0: del-a ${a.wan.name} ↔ del-b ${b.wan.name}` }]);
    }
    for (const device of [a, b]) expect(DeviceConfig.parse(await desiredConfig(t, device.id)).tunnels).toEqual([]);
    expect((await t.api("GET", `/api/tunnels/${id}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api<ErrorBody>("DELETE", `/api/tunnels/${id}`, { token: t.admin.token })).status).toBe(404);
    const audit = await t.database.db.selectFrom("audit_log").selectAll().where("resource_id", "=", id).execute();
    expect(audit.map((e) => e.action).sort()).toEqual(["create", "delete"]);
  });

  it("cannot delete another organization's tunnel", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    const created = await createTunnels(t, tunnelBody(a, b));
    const other = await t.createTenant("Thief");
    const res = await t.api<ErrorBody>("DELETE", `/api/tunnels/${created.tunnels[0]!.id}`, { token: other.token });
    expect(res.status).toBe(404);
    expect(
      await t.database.db.selectFrom("tunnels").select("id").where("id", "=", created.tunnels[0]!.id).execute(),
    ).toHaveLength(1);
  });
});

describe("DELETE /api/tunnels (by filter)", () => {
  const t = useTestServer();

  it("deletes every matching tunnel in one go: one deltunnels job per affected device", async () => {
    const tenant = await t.createTenant("Bulk");
    const hub = await wanDevice(t, { orgId: tenant.orgId, name: "hub" });
    const keep = await wanDevice(t, { orgId: tenant.orgId, name: "keep" });
    const spokes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => wanDevice(t, { orgId: tenant.orgId, name: `spoke-${i}` })),
    );
    const peer = await createPeer(t, {}, tenant.token);
    await createTunnels(
      t,
      [...spokes.map((s) => tunnelBody(s, hub)), tunnelBody(keep, spokes[0]!), peerTunnelBody(hub, peer.id)],
      { token: tenant.token },
    );
    const filter = JSON.stringify([{ key: "device.name", op: "==", val: "hub" }]);
    const res = await t.api<TunnelsDeleted>("DELETE", "/api/tunnels", { token: tenant.token, query: { filter } });
    expect(res.status, res.text).toBe(202);
    expect(res.body.deleted).toHaveLength(7);
    // hub + 6 spokes; keep's tunnel to spoke-0 stays, so keep gets no job.
    const jobs = await t.database.db.selectFrom("jobs").selectAll().where("id", "in", res.body.jobIds).execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([hub.id, ...spokes.map((s) => s.id)].sort());
    expect(jobs.find((j) => j.device_id === hub.id)?.tasks).toHaveLength(7);
    const left = await t.api<{ num: number; deviceA: { name: string } }[]>("GET", "/api/tunnels", { token: tenant.token });
    expect(left.body.map((x) => x.deviceA.name)).toEqual(["keep"]);
    expect(DeviceConfig.parse(await desiredConfig(t, hub.id)).tunnels).toEqual([]);
    expect(DeviceConfig.parse(await desiredConfig(t, spokes[0]!.id)).tunnels).toHaveLength(1);
    // The peer is free again.
    expect((await t.api("DELETE", `/api/peers/${peer.id}`, { token: tenant.token })).status).toBe(204);
  });

  it("answers 200 with nothing deleted when nothing matches", async () => {
    const res = await t.api<TunnelsDeleted>("DELETE", "/api/tunnels", {
      token: t.admin.token,
      query: { filters: JSON.stringify([{ key: "device.name", op: "==", val: "no such device" }]) },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jobIds: [], deleted: [] });
  });

  it("refuses a missing filter and bad filters, deleting nothing", async () => {
    const a = await wanDevice(t);
    const b = await wanDevice(t);
    await createTunnels(t, tunnelBody(a, b));
    const count = async () => (await t.database.db.selectFrom("tunnels").select("id").execute()).length;
    const before = await count();
    for (const [query, path] of [
      [{}, "filter"],
      [{ filter: "[]" }, "filter"],
      [{ filter: JSON.stringify([{ key: "secret", op: "==", val: 1 }]) }, "filter.0.key"],
      [{ filter: JSON.stringify([{ key: "num", op: "in", val: 1 }]) }, "filter.0.val"],
    ] as const) {
      const res = await t.api<ErrorBody>("DELETE", "/api/tunnels", { token: t.admin.token, query });
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details[0]?.path).toBe(path);
    }
    expect(await count()).toBe(before);
  });

  it("deletes every tunnel with an explicit catch-all filter, leaving other organizations alone", async () => {
    const tenant = await t.createTenant("Wipe");
    const a = await wanDevice(t, { orgId: tenant.orgId });
    const b = await wanDevice(t, { orgId: tenant.orgId });
    const c = await wanDevice(t, { orgId: tenant.orgId });
    await createTunnels(t, [tunnelBody(a, b), tunnelBody(b, c)], { token: tenant.token });
    const others = (await t.database.db.selectFrom("tunnels").select("id").where("organization_id", "!=", tenant.orgId).execute())
      .length;
    const res = await t.api<TunnelsDeleted>("DELETE", "/api/tunnels", {
      token: tenant.token,
      query: { filter: JSON.stringify([{ key: "num", op: ">=", val: 0 }]) },
    });
    expect(res.body.deleted).toHaveLength(2);
    expect(
      (await t.database.db.selectFrom("tunnels").select("id").where("organization_id", "!=", tenant.orgId).execute()).length,
    ).toBe(others);
    expect(others).toBeGreaterThan(0);
  });
});
