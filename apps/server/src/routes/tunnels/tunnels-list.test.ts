/** GET /api/tunnels and /api/tunnels/{id}: list conventions, every filter op, both response types, status semantics. */
import type { Tunnel, TunnelSummary } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestUser, useTestServer } from "../../../test/support/test-server.ts";
import {
  createPeer,
  createTunnels,
  type ErrorBody,
  peerTunnelBody,
  settleDevices,
  tunnelBody,
  wanDevice,
} from "../../../test/support/tunnels.ts";

describe("GET /api/tunnels", () => {
  const t = useTestServer();
  let tenant: TestUser & { orgId: string };
  let alpha: TestDevice;
  let bravo: TestDevice;
  let charlie: TestDevice;
  let ids: string[];

  const list = (query: Record<string, string | number | undefined> = {}) =>
    t.api<Tunnel[]>("GET", "/api/tunnels", { token: tenant.token, query });
  const nums = async (query: Record<string, string | number | undefined>) => {
    const res = await list(query);
    expect(res.status, res.text).toBe(200);
    return res.body.map((x) => x.num);
  };
  const filter = (key: string, op: string, val: unknown) => ({ filter: JSON.stringify([{ key, op, val }]) });

  beforeAll(async () => {
    tenant = await t.createTenant("Listing");
    alpha = await wanDevice(t, { orgId: tenant.orgId, name: "alpha" });
    bravo = await wanDevice(t, { orgId: tenant.orgId, name: "bravo" });
    charlie = await wanDevice(t, { orgId: tenant.orgId, name: "charlie" });
    const peer = await createPeer(t, { name: "zulu-gw" }, tenant.token);
    // 0: alpha ↔ bravo, 1: charlie ↔ bravo, 2: alpha → peer zulu-gw
    const created = await createTunnels(
      t,
      [tunnelBody(alpha, bravo), tunnelBody(charlie, bravo), peerTunnelBody(alpha, peer.id, { description: "to the cloud" })],
      { token: tenant.token },
    );
    ids = created.tunnels.map((x) => x.id);
    // alpha and bravo connected and applied; charlie has never connected.
    await settleDevices(t, [alpha.id, bravo.id]);
  });

  it("lists every tunnel by number with records-total, detailed by default", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("3");
    expect(res.body.map((x) => x.num)).toEqual([0, 1, 2]);
    expect(res.body[0]).toMatchObject({
      id: ids[0],
      org: tenant.orgId,
      deviceA: { name: "alpha" },
      deviceB: { name: "bravo" },
      interfaceA: { id: alpha.wan.id, name: alpha.wan.name },
      loopbackA: "10.100.0.2",
      loopbackB: "10.100.0.3",
    });
    expect(res.body[2]).toMatchObject({
      deviceB: null,
      interfaceB: null,
      peer: { name: "zulu-gw" },
      description: "to the cloud",
    });
  });

  it("derives each tunnel's status: applied on connected devices → Not Connected; a never-connected end → N/A, Pending", async () => {
    const [ab, cb, peer] = (await list()).body;
    expect(ab).toMatchObject({ tunnelStatus: "Not Connected", status: "Not Connected", isPending: false, pendingReason: "" });
    expect(ab).toMatchObject({ tunnelStatusA: "unknown", tunnelStatusB: "unknown" });
    expect(cb).toMatchObject({
      tunnelStatus: "Pending",
      status: "N/A",
      isPending: true,
      pendingReason: "waiting for device charlie to connect",
    });
    expect(peer).toMatchObject({ tunnelStatus: "Not Connected", status: "Not Connected", isPending: false });
  });

  it("response=summary returns only the summary fields", async () => {
    const res = await t.api<TunnelSummary[]>("GET", "/api/tunnels", { token: tenant.token, query: { response: "summary" } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body[0]!).sort()).toEqual(
      ["id", "num", "deviceA", "deviceB", "peer", "tunnelStatus", "status", "isPending", "pendingReason"].sort(),
    );
    expect(res.text.length).toBeLessThan((await list()).text.length / 2);
    expect((await t.api<ErrorBody>("GET", "/api/tunnels", { token: tenant.token, query: { response: "ids" } })).status).toBe(400);
  });

  it("sorts by any key in either order (aliases sortField/sortOrder too)", async () => {
    expect(await nums({ sort: "num", order: "desc" })).toEqual([2, 1, 0]);
    expect(await nums({ sortField: "num", sortOrder: "desc" })).toEqual([2, 1, 0]);
    expect((await nums({ sort: "deviceA.name", order: "desc" }))[0]).toBe(1);
    expect((await nums({ sort: "status", order: "asc" }))[0]).toBe(1);
    expect((await nums({ sort: "status", order: "desc" }))[2]).toBe(1);
    expect((await nums({ sort: "isPending", order: "desc" }))[0]).toBe(1);
    const bad = await t.api<ErrorBody>("GET", "/api/tunnels", { token: tenant.token, query: { sort: "psk" } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("sort");
  });

  it("filters with every op", async () => {
    expect(await nums(filter("num", "==", 1))).toEqual([1]);
    expect(await nums(filter("num", "!=", 1))).toEqual([0, 2]);
    expect(await nums(filter("num", "<", 1))).toEqual([0]);
    expect(await nums(filter("num", ">", 1))).toEqual([2]);
    expect(await nums(filter("num", "<=", 1))).toEqual([0, 1]);
    expect(await nums(filter("num", ">=", 1))).toEqual([1, 2]);
    expect(await nums(filter("num", "in", [0, 2]))).toEqual([0, 2]);
    expect(await nums(filter("description", "contains", "CLOUD"))).toEqual([2]);
    expect(await nums(filter("description", "!contains", "cloud"))).toEqual([0, 1]);
  });

  it("device.* matches either end; deviceA.* and deviceB.* one end", async () => {
    expect(await nums(filter("device.name", "==", "bravo"))).toEqual([0, 1]);
    expect(await nums(filter("device.name", "contains", "ALP"))).toEqual([0, 2]);
    expect(await nums(filter("device.name", "!contains", "brav"))).toEqual([2]);
    expect(await nums(filter("device.name", "!=", "charlie"))).toEqual([0, 2]);
    expect(await nums(filter("device.id", "==", charlie.id))).toEqual([1]);
    expect(await nums(filter("deviceA.name", "==", "alpha"))).toEqual([0, 2]);
    expect(await nums(filter("deviceB.name", "==", "bravo"))).toEqual([0, 1]);
    expect(await nums(filter("deviceB.id", "in", [bravo.id]))).toEqual([0, 1]);
    expect(await nums(filter("interfaceA.name", "==", alpha.wan.name))).toEqual([0, 1, 2]);
    expect(await nums(filter("interfaceB.id", "==", bravo.wan.id))).toEqual([0, 1]);
  });

  it("filters by peer, status, pending state and time", async () => {
    expect(await nums(filter("peer.name", "==", "zulu-gw"))).toEqual([2]);
    expect(await nums(filter("peer.id", "==", null))).toEqual([0, 1]);
    expect(await nums(filter("peer.remoteIP", "==", "203.0.113.9"))).toEqual([2]);
    expect(await nums(filter("tunnelStatus", "==", "Pending"))).toEqual([1]);
    expect(await nums(filter("tunnelStatus", "in", ["Connected", "Not Connected"]))).toEqual([0, 2]);
    expect(await nums(filter("status", "==", "N/A"))).toEqual([1]);
    expect(await nums(filter("isPending", "==", true))).toEqual([1]);
    expect(await nums(filter("isPending", "==", "false"))).toEqual([0, 2]);
    expect(await nums(filter("tunnelStatusA", "==", "unknown"))).toEqual([0, 1, 2]);
    expect(await nums(filter("createdAt", ">", "2000-01-01T00:00:00Z"))).toEqual([0, 1, 2]);
    expect(await nums(filter("createdAt", "<", "2000-01-01T00:00:00Z"))).toEqual([]);
    // Several filters are ANDed.
    const both = JSON.stringify([
      { key: "device.name", op: "==", val: "bravo" },
      { key: "isPending", op: "==", val: false },
    ]);
    expect(await nums({ filter: both })).toEqual([0]);
  });

  it("refuses unknown keys and ops that do not fit the field, naming the filter", async () => {
    for (const [f, path] of [
      [filter("psk", "==", "x"), "filter.0.key"],
      [filter("isPending", "<", true), "filter.0.op"],
      [filter("num", "==", "many"), "filter.0.val"],
      [filter("device.id", "==", "not-a-uuid"), "filter.0.val"],
      [{ filter: "not json" }, "filter"],
    ] as const) {
      const res = await t.api<ErrorBody>("GET", "/api/tunnels", { token: tenant.token, query: f });
      expect(res.status, JSON.stringify(f)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details[0]?.path).toBe(path);
    }
  });

  it("pages with offset and limit; records-total counts before paging", async () => {
    const res = await list({ offset: 1, limit: 1 });
    expect(res.body.map((x) => x.num)).toEqual([1]);
    expect(res.headers.get("records-total")).toBe("3");
    const filtered = await list({ ...filter("device.name", "==", "alpha"), limit: 1 });
    expect(filtered.body).toHaveLength(1);
    expect(filtered.headers.get("records-total")).toBe("2");
    expect((await list({ limit: 1001 })).status).toBe(400);
  });

  it("gives the same pages whether it pages on the tunnels table (plain keys) or on the derived facts", async () => {
    // Sorted by num with no derived filter, the page is chosen on the table and only its facts are read;
    // a filter on a derived key that every tunnel passes takes the other path. Both must agree.
    const everyStatus = filter("tunnelStatus", "!=", "no such status");
    for (const [offset, limit] of [
      [0, 2],
      [1, 2],
      [2, 5],
      [3, 1],
    ] as const) {
      for (const order of ["asc", "desc"] as const) {
        const plain = await list({ offset, limit, sort: "num", order });
        const derived = await list({ offset, limit, sort: "num", order, ...everyStatus });
        expect(plain.status, plain.text).toBe(200);
        expect(plain.body).toEqual(derived.body);
        expect(plain.headers.get("records-total")).toBe("3");
        expect(derived.headers.get("records-total")).toBe("3");
      }
    }
    // A filter on a table column (one end) with a sort on another, both paths.
    const query = { ...filter("deviceB.id", "==", bravo.id), sort: "createdAt", order: "desc" };
    const byTable = await list(query);
    const byFacts = await list({
      ...query,
      filter: JSON.stringify([...JSON.parse(query.filter), ...JSON.parse(everyStatus.filter)]),
    });
    expect(byTable.body.map((x) => x.num).sort()).toEqual([0, 1]);
    expect(byTable.body).toEqual(byFacts.body);
  });

  it("follows job and connection state: a failed job → Pending naming the device; a disconnected end → N/A", async () => {
    await t.database.db
      .insertInto("jobs")
      .values({
        id: crypto.randomUUID(),
        organization_id: tenant.orgId,
        device_id: bravo.id,
        type: "modify",
        state: "failed",
        tasks: "[]",
        target_hash: "x",
        created_by: "test",
      })
      .execute();
    const failed = await t.api<Tunnel>("GET", `/api/tunnels/${ids[0]}`, { token: tenant.token });
    expect(failed.body).toMatchObject({
      tunnelStatus: "Pending",
      status: "Pending",
      isPending: true,
      pendingReason: "waiting for device bravo to apply configuration (its last configuration job failed)",
    });
    await t.database.db.updateTable("jobs").set({ state: "complete" }).where("device_id", "=", bravo.id).execute();
    await t.database.db.updateTable("devices").set({ connection: "disconnected" }).where("id", "=", alpha.id).execute();
    const down = await t.api<Tunnel>("GET", `/api/tunnels/${ids[0]}`, { token: tenant.token });
    expect(down.body).toMatchObject({ tunnelStatus: "Not Connected", status: "N/A", isPending: false });
    expect(await nums(filter("status", "==", "N/A"))).toEqual([0, 1, 2]);
    await settleDevices(t, [alpha.id]);
  });

  it("GET /tunnels/{id}: 404 for an unknown id or another organization's tunnel, 400 for a bad id", async () => {
    expect((await t.api<Tunnel>("GET", `/api/tunnels/${ids[1]}`, { token: tenant.token })).body.num).toBe(1);
    expect((await t.api("GET", `/api/tunnels/${crypto.randomUUID()}`, { token: tenant.token })).status).toBe(404);
    expect((await t.api("GET", `/api/tunnels/${ids[1]}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api<ErrorBody>("GET", "/api/tunnels/nope", { token: tenant.token })).body.code).toBe("VALIDATION_FAILED");
  });
});
