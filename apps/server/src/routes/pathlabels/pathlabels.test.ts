/** /api/pathlabels: CRUD with the list conventions; deleting a label in use is refused, or with force removed from every user. */
import { randomUUID } from "node:crypto";
import { DeviceConfig, type MlPolicy, type PathLabel } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { readDesiredConfig } from "../../services/desired-config-seal.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
const f = (...filters: { key: string; op: string; val: unknown }[]) => JSON.stringify(filters);

describe("path labels", () => {
  const t = useTestServer();
  const create = (body: Record<string, unknown>) => t.api<PathLabel>("POST", "/api/pathlabels", { token: t.admin.token, body });

  it("POST creates with defaults; GET reads it; names are unique per organization", async () => {
    const res = await create({ name: "ISP-A" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "ISP-A", color: "#1f77b4", type: "DIA", description: "", org: t.admin.orgId });
    expect((await t.api("GET", `/api/pathlabels/${res.body.id}`, { token: t.admin.token })).body).toEqual(res.body);
    const dup = await t.api<ErrorBody>("POST", "/api/pathlabels", { token: t.admin.token, body: { name: "ISP-A" } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("CONFLICT");
    const tenant = await t.createTenant("Other");
    expect((await t.api("POST", "/api/pathlabels", { token: tenant.token, body: { name: "ISP-A" } })).status).toBe(201);
  });

  it("validates colour, type and name", async () => {
    for (const [body, path] of [
      [{ name: "x", color: "red" }, "color"],
      [{ name: "x", type: "MPLS" }, "type"],
      [{ name: "" }, "name"],
      [{}, "name"],
    ] as const) {
      const res = await t.api<ErrorBody>("POST", "/api/pathlabels", { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details[0]?.path).toBe(path);
    }
  });

  it("PUT changes name, colour and type; unknown ids are 404", async () => {
    const label = (await create({ name: "LTE", type: "DIA" })).body;
    const res = await t.api<PathLabel>("PUT", `/api/pathlabels/${label.id}`, {
      token: t.admin.token,
      body: { name: "LTE backup", color: "#ff0000", type: "Tunnel", description: "4G" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: label.id, name: "LTE backup", color: "#ff0000", type: "Tunnel", description: "4G" });
    expect((await t.api("PUT", `/api/pathlabels/${label.id}`, { token: t.admin.token, body: { name: "ISP-A" } })).status).toBe(
      409,
    );
    expect((await t.api("GET", `/api/pathlabels/${randomUUID()}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api("PUT", `/api/pathlabels/${randomUUID()}`, { token: t.admin.token, body: { name: "z" } })).status).toBe(
      404,
    );
  });

  it("lists with sort, order, filters and paging", async () => {
    for (const [name, type] of [
      ["MPLS-1", "Tunnel"],
      ["MPLS-2", "Tunnel"],
      ["Fiber", "DIA"],
    ])
      await create({ name, type });
    const list = (query: Record<string, string | number>) =>
      t.api<PathLabel[]>("GET", "/api/pathlabels", { token: t.admin.token, query });
    const all = await list({});
    expect(all.body.map((l) => l.name)).toEqual(["Fiber", "ISP-A", "LTE backup", "MPLS-1", "MPLS-2"]);
    expect(all.headers.get("records-total")).toBe("5");
    expect((await list({ sort: "name", order: "desc", limit: 2 })).body.map((l) => l.name)).toEqual(["MPLS-2", "MPLS-1"]);
    const tunnels = await list({ filter: f({ key: "type", op: "==", val: "Tunnel" }), offset: 1, limit: 1 });
    expect(tunnels.headers.get("records-total")).toBe("3");
    expect(tunnels.body.map((l) => l.name)).toEqual(["MPLS-1"]);
    expect((await list({ filter: f({ key: "name", op: "contains", val: "mpls" }) })).body).toHaveLength(2);
    expect((await list({ filter: f({ key: "name", op: "!contains", val: "mpls" }) })).body).toHaveLength(3);
    expect((await list({ filter: f({ key: "name", op: "in", val: ["Fiber", "LTE backup"] }) })).body).toHaveLength(2);
    expect((await list({ filter: f({ key: "createdAt", op: "<", val: "2000-01-01T00:00:00Z" }) })).body).toHaveLength(0);
    const bad = await t.api<ErrorBody>("GET", "/api/pathlabels", {
      token: t.admin.token,
      query: { filter: f({ key: "colour", op: "==", val: "x" }) },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("filter.0.key");
  });

  it("an unused label is deleted with 204", async () => {
    const label = (await create({ name: "temp" })).body;
    expect((await t.api("DELETE", `/api/pathlabels/${label.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/pathlabels/${label.id}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api("DELETE", `/api/pathlabels/${label.id}`, { token: t.admin.token })).status).toBe(404);
  });

  it("a label in use is refused naming its users; force removes it everywhere and recompiles the devices", async () => {
    const doomed = (await create({ name: "doomed" })).body;
    const keep = (await create({ name: "keep" })).body;
    const a = await insertTestDevice(t, { name: "pl-a", wanIp: "10.20.1.2", lanIp: "192.168.101.1" });
    const b = await insertTestDevice(t, { name: "pl-b", wanIp: "10.20.2.2", lanIp: "192.168.102.1" });
    await t.database.db
      .updateTable("devices")
      .set({ interfaces: toJson([{ ...a.wan, pathlabels: [doomed.id, keep.id] }, a.lan]) })
      .where("id", "=", a.id)
      .execute();
    const tunnelId = randomUUID();
    await t.database.db
      .insertInto("tunnels")
      .values({
        id: tunnelId,
        organization_id: t.admin.orgId,
        num: 7,
        device_a: a.id,
        interface_a: a.wan.id,
        device_b: b.id,
        interface_b: b.wan.id,
        pathlabel_id: doomed.id,
        endpoint_key: `${a.id}:${a.wan.id}|${b.id}:${b.wan.id}`,
        psk_enc: t.deps.keyring.encrypt("tunnel-secret-0007", tunnelId),
        notifications: toJson({ rtt: null, dropRate: null }),
      })
      .execute();
    const rule = (name: string, priority: number, pathlabels: string[]) => ({
      name,
      priority,
      match: { protocol: "udp", ports: "5060" },
      action: { order: "priority", pathlabels },
    });
    const policy = await t.api<MlPolicy>("POST", "/api/mlpolicies", {
      token: t.admin.token,
      body: { name: "uses doomed", rules: [rule("both", 1, [doomed.id, keep.id]), rule("only", 2, [doomed.id])] },
    });
    expect(policy.status).toBe(201);
    expect(
      (await t.api("POST", `/api/mlpolicies/${policy.body.id}/install`, { token: t.admin.token, body: { deviceIds: [b.id] } }))
        .status,
    ).toBe(202);

    const refused = await t.api<ErrorBody>("DELETE", `/api/pathlabels/${doomed.id}`, { token: t.admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("CONFLICT");
    expect(refused.body.details).toEqual([
      { path: "interfaces", message: "interface wan0 of device pl-a" },
      { path: "tunnels", message: "tunnel 7" },
      { path: "mlpolicies", message: "multi-link policy uses doomed" },
    ]);
    expect((await t.api("GET", `/api/pathlabels/${doomed.id}`, { token: t.admin.token })).status).toBe(200);

    const forced = await t.api<{ jobIds: string[] }>("DELETE", `/api/pathlabels/${doomed.id}`, {
      token: t.admin.token,
      query: { force: "true" },
    });
    expect(forced.status).toBe(202);
    expect(forced.body.jobIds).toHaveLength(2);
    expect(forced.headers.get("location")).toContain("/api/jobs?ids=");

    const devices = await t.database.db
      .selectFrom("devices")
      .selectAll()
      .where("id", "in", [a.id, b.id])
      .orderBy("name")
      .execute();
    expect(devices[0]?.interfaces[0]?.pathlabels).toEqual([keep.id]);
    const configA = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, devices[0]!.id));
    expect(configA.interfaces.find((i) => i.name === "wan0")?.pathLabels).toEqual([keep.id]);
    expect(configA.tunnels[0]?.pathLabel).toBeNull();
    const configB = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, devices[1]!.id));
    expect(configB.policy?.rules.map((r) => [r.name, r.pathLabels])).toEqual([["both", [keep.id]]]);
    const tunnel = await t.database.db
      .selectFrom("tunnels")
      .select("pathlabel_id")
      .where("id", "=", tunnelId)
      .executeTakeFirstOrThrow();
    expect(tunnel.pathlabel_id).toBeNull();
    const after = await t.api<MlPolicy>("GET", `/api/mlpolicies/${policy.body.id}`, { token: t.admin.token });
    expect(after.body.rules.map((r) => [r.name, r.action.pathlabels])).toEqual([["both", [keep.id]]]);
    const jobs = await t.database.db
      .selectFrom("jobs")
      .select(["device_id", "type"])
      .where("id", "in", forced.body.jobIds)
      .execute();
    expect(jobs.map((j) => j.device_id).sort()).toEqual([a.id, b.id].sort());
  });
});
