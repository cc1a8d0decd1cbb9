import type { DeviceInterface, DeviceSummary } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { addDeviceNotifications, objectPathDevices } from "../../../test/support/device-list-json.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { RECORDS_NEXT_HEADER } from "../../http/list-query.ts";

describe("GET /api/devices?response=summary (JSON built by the database)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  const ids: string[] = [];

  beforeAll(async () => {
    tenant = await t.createTenant("Summaries");
    const names = ["alpha", 'quote "q" \\ back', "tab\there", "ünïcode ✓", "zulu-7", "x7", "Alpha", "beta", "gamma 77", "delta"];
    for (const [i, name] of names.entries()) {
      const d = await insertValidDevice(t, { name, approved: i % 3 !== 1, orgId: tenant.orgId });
      ids.push(d.id);
      const row = await t.database.db.selectFrom("devices").select("interfaces").where("id", "=", d.id).executeTakeFirstOrThrow();
      const interfaces = (row.interfaces as DeviceInterface[]).map((itf, j) => {
        const copy: Record<string, unknown> = { ...itf };
        // The flag set, unset (an older row) or null; a DHCP client without an address; an unassigned port.
        if (i % 4 === 0) copy.isPublicAddressRateLimited = j === 0;
        else if (i % 4 === 1) delete copy.isPublicAddressRateLimited;
        else if (i % 4 === 2) copy.isPublicAddressRateLimited = null;
        if (i === 5 && j === 0) Object.assign(copy, { dhcp: "yes", IPv4: "", IPv4Mask: null });
        if (i === 6 && j === 1) copy.isAssigned = false;
        return copy;
      });
      await t.database.db
        .updateTable("devices")
        .set({
          interfaces: toJson(interfaces),
          hostname: `host-${(i * 7) % 10}`,
          connection: i % 2 ? "connected" : i % 5 ? "disconnected" : "never",
        })
        .where("id", "=", d.id)
        .execute();
      await addDeviceNotifications(t, tenant.orgId, d.id, i % 3, { oneRead: i % 2 === 0 });
    }
  });

  /** What the object path answers for the same query. */
  const expected = (query: Record<string, string>) => objectPathDevices(t, { ...tenant, name: "Summaries" }, "summary")(query);

  const cases: Record<string, string>[] = [
    {},
    { limit: "3" },
    { limit: "3", offset: "3" },
    { sort: "hostname", order: "desc" },
    { sort: "hostname", order: "desc", limit: "4", filter: JSON.stringify([{ key: "name", op: "contains", val: "7" }]) },
    { filter: JSON.stringify([{ key: "isApproved", op: "==", val: false }]) },
    { sort: "pendingNotifications", order: "desc" },
    { offset: "50" },
    // No rows: none in the list, none asked for (the total counted alone), none matching.
    { limit: "0" },
    { limit: "0", filter: JSON.stringify([{ key: "name", op: "contains", val: "7" }]) },
    { filter: JSON.stringify([{ key: "name", op: "contains", val: "no such device" }]) },
    { sort: "hostname", order: "asc", limit: "5" },
  ];

  it("answers what the object path answers: same rows, order, values, total and next cursor", async () => {
    for (const query of cases) {
      const res = await t.api<DeviceSummary[]>("GET", "/api/devices", {
        token: tenant.token,
        query: { ...query, response: "summary" },
      });
      expect(res.status, JSON.stringify(query)).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const want = await expected(query);
      expect(res.body, JSON.stringify(query)).toEqual(want.items);
      expect(res.headers.get("records-total")).toBe(String(want.total));
      expect(res.headers.get(RECORDS_NEXT_HEADER) ?? null, JSON.stringify(query)).toBe(want.next);
      expect(JSON.stringify(res.body)).toBe(JSON.stringify(want.items));
    }
  });

  it("walks the same pages by cursor, and narrows by ids the same way", async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 5; page++) {
      const query: Record<string, string> = { limit: "3", ...(after ? { after } : {}) };
      const res = await t.api<DeviceSummary[]>("GET", "/api/devices", {
        token: tenant.token,
        query: { ...query, response: "summary" },
      });
      const want = await expected(query);
      expect(res.body).toEqual(want.items);
      seen.push(...res.body.map((d) => d.id));
      const next = res.headers.get(RECORDS_NEXT_HEADER);
      expect(next ?? null).toBe(want.next);
      if (!next) break;
      after = next;
    }
    expect(new Set(seen).size).toBe(ids.length);
    const some = { ids: ids.slice(2, 6).join(","), sort: "name", order: "desc" };
    const res = await t.api<DeviceSummary[]>("GET", "/api/devices", {
      token: tenant.token,
      query: { ...some, response: "summary" },
    });
    expect(res.body).toEqual((await expected(some)).items);
    expect(res.body).toHaveLength(4);
  });
});
