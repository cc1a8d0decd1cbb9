/** GET /api/devices and /api/devices/{id}: three response sizes, pending notifications, rate-limit flag, list conventions. */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Device, DeviceInterface, DeviceSummary } from "@tern/protocol";
import { Device as DeviceSchema, DeviceSummary as DeviceSummarySchema } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { insertNotification } from "../../../test/support/device-list-json.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

const sample = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../../../../packages/protocol/fixtures/v1/Device/valid-full.json"), "utf8"),
) as Device;

describe("GET /api/devices", () => {
  const t = useTestServer();
  let devices: TestDevice[] = [];
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;

  const list = <T = Device[]>(query: Record<string, string | number | undefined> = {}, token = tenant.token) =>
    t.api<T>("GET", "/api/devices", { token, query });
  const filter = (...filters: [string, string, unknown][]) => JSON.stringify(filters.map(([key, op, val]) => ({ key, op, val })));
  const names = (res: { body: { name: string }[] }) => res.body.map((d) => d.name);

  beforeAll(async () => {
    tenant = await t.createTenant("Fleet");
    const specs = [
      { name: "alpha", approved: true },
      { name: "bravo", approved: false },
      { name: "charlie", approved: true },
      { name: "delta", approved: true },
    ];
    devices = [];
    for (const s of specs) devices.push(await insertValidDevice(t, { ...s, orgId: tenant.orgId }));
    // Full configuration on alpha (DHCP, BGP, firewall from the protocol sample); delta connected with a newer agent.
    await t.database.db
      .updateTable("devices")
      .set({
        dhcp: toJson(sample.dhcp.map((d) => ({ ...d, interface: devices[0]!.lan.devId }))),
        bgp: toJson(sample.bgp),
        firewall: toJson(sample.firewall),
        static_routes: toJson(sample.staticRoutes),
        description: "hub site with a long description ".repeat(5),
      })
      .where("id", "=", devices[0]!.id)
      .execute();
    await t.database.db
      .updateTable("devices")
      .set({ connection: "connected", agent_version: "0.2.0", protocol_version: 2, last_connected_at: new Date() })
      .where("id", "=", devices[3]!.id)
      .execute();
  });

  it("detailed (default) answers whole devices in the protocol shape, sorted by name", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("4");
    expect(names(res)).toEqual(["alpha", "bravo", "charlie", "delta"]);
    for (const d of res.body) expect(DeviceSchema.safeParse(d).success, d.name).toBe(true);
    expect(res.body[0]).toMatchObject({ org: tenant.orgId, isApproved: true, connection: "never", isConnected: false });
    expect(res.body[3]).toMatchObject({ isConnected: true, connection: "connected", versions: { agent: "0.2.0", protocol: 2 } });
    expect(res.body[0]!.bgp.neighbors[0]?.multiHop).toBe(2);
    expect(res.body[0]!.firewall.rules.some((r) => r.direction === "lanNat")).toBe(true);
    expect(res.text).not.toMatch(/token_hash|test-hash-/);
  });

  it("summary is much smaller than detailed; ids are only ids", async () => {
    const detailed = await list({ response: "detailed" });
    const summary = await list<DeviceSummary[]>({ response: "summary" });
    const ids = await list<string[]>({ response: "ids" });
    for (const s of summary.body) expect(DeviceSummarySchema.strict().safeParse(s).success).toBe(true);
    expect(summary.body[0]).toEqual({
      id: devices[0]!.id,
      name: "alpha",
      hostname: "alpha",
      isApproved: true,
      isConnected: false,
      pendingNotifications: 0,
      tags: [],
      interfaces: [
        {
          id: devices[0]!.wan.id,
          name: "wan0",
          type: "WAN",
          IPv4: devices[0]!.wan.IPv4,
          IPv4Mask: 24,
          isPublicAddressRateLimited: false,
        },
        {
          id: devices[0]!.lan.id,
          name: "lan0",
          type: "LAN",
          IPv4: devices[0]!.lan.IPv4,
          IPv4Mask: 24,
          isPublicAddressRateLimited: false,
        },
      ],
    });
    expect(ids.body).toEqual(devices.map((d) => d.id));
    expect(ids.headers.get("records-total")).toBe("4");

    const perDevice = (text: string, n: number) => Math.round(Buffer.byteLength(text) / n);
    const sizes = { detailed: perDevice(detailed.text, 4), summary: perDevice(summary.text, 4), ids: perDevice(ids.text, 4) };
    // Printed so the figure can be quoted (docs/server.md): bytes per device of each response size.
    console.log(`GET /api/devices bytes per device: ${JSON.stringify(sizes)}`);
    expect(sizes.summary * 3).toBeLessThan(sizes.detailed);
    expect(sizes.ids).toBeLessThan(sizes.summary);
    // The fully configured device alone: summary a small fraction of detailed.
    const one = (res: { body: { id: string }[] }) =>
      Buffer.byteLength(JSON.stringify(res.body.find((d) => d.id === devices[0]!.id)));
    expect(one(summary) * 5).toBeLessThan(one(detailed));
  });

  it("pendingNotifications counts the device's unread, unresolved notifications", async () => {
    const [alpha, bravo] = devices;
    // In the devices' organization (the tenant's): a row never moves to another one afterwards.
    await insertNotification(t, tenant.orgId, alpha!.id, {});
    await insertNotification(t, tenant.orgId, alpha!.id, {});
    await insertNotification(t, tenant.orgId, alpha!.id, { read: true });
    await insertNotification(t, tenant.orgId, alpha!.id, { resolved: true });
    await insertNotification(t, tenant.orgId, bravo!.id, {});
    const res = await list({ sort: "name" });
    expect(res.body.map((d) => d.pendingNotifications)).toEqual([2, 1, 0, 0]);
    const summary = await list<DeviceSummary[]>({ response: "summary" });
    expect(summary.body.map((d) => d.pendingNotifications)).toEqual([2, 1, 0, 0]);
    expect(names(await list({ filter: filter(["pendingNotifications", ">=", 1]) }))).toEqual(["alpha", "bravo"]);
    expect(names(await list({ sort: "pendingNotifications", order: "desc" })).slice(0, 2)).toEqual(["alpha", "bravo"]);
    expect((await t.api<Device>("GET", `/api/devices/${alpha!.id}`, { token: tenant.token })).body.pendingNotifications).toBe(2);
  });

  it("each interface carries isPublicAddressRateLimited", async () => {
    const charlie = devices[2]!;
    const interfaces: DeviceInterface[] = [{ ...charlie.wan, isPublicAddressRateLimited: true }, charlie.lan];
    await t.database.db
      .updateTable("devices")
      .set({ interfaces: toJson(interfaces) })
      .where("id", "=", charlie.id)
      .execute();
    const detailed = await list({ filter: filter(["name", "==", "charlie"]) });
    expect(detailed.body[0]!.interfaces.map((i) => i.isPublicAddressRateLimited)).toEqual([true, false]);
    const summary = await list<DeviceSummary[]>({ response: "summary", filter: filter(["name", "==", "charlie"]) });
    expect(summary.body[0]!.interfaces.map((i) => i.isPublicAddressRateLimited)).toEqual([true, false]);
    expect(names(await list({ filter: filter(["interfaces.isPublicAddressRateLimited", "==", true]) }))).toEqual(["charlie"]);
  });

  it("filters: every op, several keys ANDed", async () => {
    const cases: [string, [string, string, unknown][], string[]][] = [
      ["==", [["name", "==", "bravo"]], ["bravo"]],
      ["!=", [["name", "!=", "bravo"]], ["alpha", "charlie", "delta"]],
      ["contains (case-insensitive)", [["hostname", "contains", "HARL"]], ["charlie"]],
      ["!contains", [["name", "!contains", "a"]], []],
      ["in", [["name", "in", ["alpha", "delta", "zulu"]]], ["alpha", "delta"]],
      ["<", [["name", "<", "bravo"]], ["alpha"]],
      [">", [["name", ">", "charlie"]], ["delta"]],
      ["<=", [["versions.protocol", "<=", 0]], ["alpha", "bravo", "charlie"]],
      [">=", [["versions.protocol", ">=", 2]], ["delta"]],
      ["isApproved", [["isApproved", "==", false]], ["bravo"]],
      ["isConnected", [["isConnected", "==", true]], ["delta"]],
      ["connection", [["connection", "==", "never"]], ["alpha", "bravo", "charlie"]],
      ["versions.agent", [["versions.agent", "==", "0.2.0"]], ["delta"]],
      ["machineId", [["machineId", "==", `machine-${devices[1]!.id}`]], ["bravo"]],
      ["description", [["description", "contains", "hub site"]], ["alpha"]],
      ["createdAt", [["createdAt", "<", new Date(Date.now() + 60_000).toISOString()]], ["alpha", "bravo", "charlie", "delta"]],
      ["lastConnectedAt", [["lastConnectedAt", "!=", null]], ["delta"]],
      ["interfaces.IPv4 ==", [["interfaces.IPv4", "==", devices[1]!.lan.IPv4]], ["bravo"]],
      ["interfaces.IPv4 contains", [["interfaces.IPv4", "contains", "172.31."]], ["alpha", "bravo", "charlie", "delta"]],
      [
        "interfaces.IPv4 !=: no interface has it",
        [["interfaces.IPv4", "!=", devices[1]!.wan.IPv4]],
        ["alpha", "charlie", "delta"],
      ],
      ["interfaces.name", [["interfaces.name", "==", "lan0"]], ["alpha", "bravo", "charlie", "delta"]],
      ["interfaces.name !contains", [["interfaces.name", "!contains", "wan"]], []],
      ["interfaces.type in", [["interfaces.type", "in", ["NONE"]]], []],
      ["interfaces.devId", [["interfaces.devId", "==", devices[2]!.wan.devId]], ["charlie"]],
      [
        "AND of two keys",
        [
          ["isApproved", "==", true],
          ["name", "in", ["alpha", "bravo"]],
        ],
        ["alpha"],
      ],
    ];
    for (const [label, filters, expected] of cases) {
      const res = await list({ filter: filter(...filters) });
      expect(res.status, label).toBe(200);
      expect(names(res), label).toEqual(expected);
      expect(res.headers.get("records-total"), label).toBe(String(expected.length));
    }
    // The alias `filters` works too.
    expect(names(await list({ filters: filter(["name", "==", "delta"]) }))).toEqual(["delta"]);
  });

  it("sort, order (with aliases) and paging with records-total", async () => {
    expect(names(await list({ sort: "name", order: "desc" }))).toEqual(["delta", "charlie", "bravo", "alpha"]);
    expect(names(await list({ sortField: "isApproved", sortOrder: "asc" }))[0]).toBe("bravo");
    expect(names(await list({ sort: "versions.protocol", order: "desc" }))[0]).toBe("delta");
    const page = await list({ sort: "name", offset: 1, limit: 2 });
    expect(names(page)).toEqual(["bravo", "charlie"]);
    expect(page.headers.get("records-total")).toBe("4");
    const beyond = await list({ offset: 10 });
    expect(beyond.body).toEqual([]);
    expect(beyond.headers.get("records-total")).toBe("4");
  });

  it("ids fetches specific devices (still filtered, sorted, paged)", async () => {
    const ids = [devices[3]!.id, devices[0]!.id].join(",");
    expect(names(await list({ ids }))).toEqual(["alpha", "delta"]);
    expect(names(await list({ ids, sort: "name", order: "desc", response: "summary" }))).toEqual(["delta", "alpha"]);
    expect(names(await list({ ids, filter: filter(["isConnected", "==", true]) }))).toEqual(["delta"]);
    // Another organization's device is not found through ids.
    const foreign = await insertValidDevice(t);
    expect((await list({ ids: foreign.id })).body).toEqual([]);
  });

  it("bad queries are 400 naming the parameter", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response: "full" }, "response"],
      [{ sort: "interfaces.IPv4" }, "sort"],
      [{ sort: "token" }, "sort"],
      [{ filter: filter(["deviceToken", "==", "x"]) }, "filter.0.key"],
      [{ filter: filter(["isApproved", "==", "maybe"]) }, "filter.0.val"],
      [{ filter: filter(["isApproved", "<", true]) }, "filter.0.op"],
      [{ filter: filter(["createdAt", ">", "yesterday"]) }, "filter.0.val"],
      [{ filter: "[{" }, "filter"],
      [{ ids: "not-a-uuid" }, "ids"],
      [{ limit: "5000" }, "limit"],
      [{ order: "up" }, "order"],
    ];
    for (const [query, path] of cases) {
      const res = await list<ErrorBody>(query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(
        res.body.details.map((d) => d.path.split(".").slice(0, path.split(".").length).join(".")),
        JSON.stringify(query),
      ).toContain(path);
    }
  });

  it("each organization sees only its own devices", async () => {
    const own = await list({}, t.admin.token);
    expect(own.body.map((d) => d.id)).not.toContain(devices[0]!.id);
  });
});

describe("GET /api/devices/{id}", () => {
  const t = useTestServer();

  it("answers one device; unknown is 404, a bad id 400", async () => {
    const device = await insertValidDevice(t, { name: "solo" });
    const res = await t.api<Device>("GET", `/api/devices/${device.id}`, { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(DeviceSchema.parse(res.body)).toMatchObject({ id: device.id, name: "solo", org: t.admin.orgId });
    expect(res.body.interfaces.map((i) => i.id)).toEqual([device.wan.id, device.lan.id]);
    const unknown = await t.api<ErrorBody>("GET", `/api/devices/${randomUUID()}`, { token: t.admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("NOT_FOUND");
    const bad = await t.api<ErrorBody>("GET", "/api/devices/nope", { token: t.admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("id");
  });
});
