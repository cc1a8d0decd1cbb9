import type { Device, DeviceInterface } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { addDeviceNotifications, objectPathDevices } from "../../../test/support/device-list-json.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { RECORDS_NEXT_HEADER } from "../../http/list-query.ts";

const SECRET_FIELDS = ["pin", "pinEnc", "password", "passwordEnc", "passphrase", "passphraseEnc"];

describe("GET /api/devices detailed (JSON built by the database)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  const ids: string[] = [];

  beforeAll(async () => {
    tenant = await t.createTenant("Detailed");
    const policy = await t.api<{ id: string }>("POST", "/api/mlpolicies", {
      token: tenant.token,
      body: { name: "p", rules: [] },
    });
    const names = ["alpha", 'quote "q" \\ back', "tab\there", "ünïcode ✓", "zulu-7", "x7", "Alpha", "beta", "gamma 77", "delta"];
    for (const [i, name] of names.entries()) {
      const d = await insertValidDevice(t, { name, approved: i % 3 !== 1, orgId: tenant.orgId });
      ids.push(d.id);
      const row = await t.database.db.selectFrom("devices").select("interfaces").where("id", "=", d.id).executeTakeFirstOrThrow();
      const interfaces = (row.interfaces as DeviceInterface[]).map((itf, j) => {
        const copy: Record<string, unknown> = { ...itf };
        if (i % 4 === 0) copy.isPublicAddressRateLimited = j === 0;
        else if (i % 4 === 1) delete copy.isPublicAddressRateLimited;
        else if (i % 4 === 2) copy.isPublicAddressRateLimited = null;
        // Radio settings as stored: secrets encrypted (and, defensively, a clear one that must not show either).
        if (i % 3 === 0 && j === 1)
          Object.assign(copy, { deviceType: "lte", lte: { apn: "internet", pinEnc: "v1:secret-pin", passwordEnc: "v1:pw" } });
        if (i % 3 === 1 && j === 1)
          Object.assign(copy, { deviceType: "wifi", wifi: { ssid: "tern", passphraseEnc: "v1:pass", passphrase: "clear" } });
        if (i === 5 && j === 0) Object.assign(copy, { dhcp: "yes", IPv4: "", IPv4Mask: null, lte: null });
        return copy;
      });
      await t.database.db
        .updateTable("devices")
        .set({
          interfaces: toJson(interfaces),
          hostname: `host-${(i * 7) % 10}`,
          connection: i % 2 ? "connected" : i % 5 ? "disconnected" : "never",
          description: i % 2 ? `line\nbreak ${i}` : "",
          tags: i % 3 ? [`t${i}`, "edge"] : [],
          desired_hash: i % 2 ? `h${i}` : null,
          applied_hash: i % 4 ? `h${i}` : null,
          mlpolicy_id: i === 3 ? policy.body.id : null,
        })
        .where("id", "=", d.id)
        .execute();
      // Microseconds the driver truncates to milliseconds; one time without a fraction.
      await sql`update devices set created_at = ${`2026-0${1 + (i % 9)}-0${1 + (i % 8)}T0${i % 10}:04:05.${String(123456 + i * 98765).slice(0, 6)}Z`}::timestamptz,
          updated_at = ${i === 4 ? "2026-12-05T10:00:00Z" : `2026-12-05T10:00:00.99${i}999Z`}::timestamptz,
          last_connected_at = ${i % 2 ? `2026-11-30T23:59:59.00${i}5Z` : null}::timestamptz
        where id = ${d.id}::uuid`.execute(t.database.db);
      await addDeviceNotifications(t, tenant.orgId, d.id, i % 3, { oneRead: i % 2 === 0 });
    }
  });

  /** What the object path answers for the same query. */
  const expected = (query: Record<string, string>) => objectPathDevices(t, { ...tenant, name: "Detailed" }, "detailed")(query);

  const cases: Record<string, string>[] = [
    {},
    { response: "detailed" },
    { limit: "3", offset: "3" },
    { sort: "hostname", order: "desc", limit: "4", filter: JSON.stringify([{ key: "name", op: "contains", val: "7" }]) },
    { filter: JSON.stringify([{ key: "isApproved", op: "==", val: false }]) },
    { sort: "createdAt", order: "desc" },
    { sort: "lastConnectedAt" },
    { sort: "pendingNotifications", order: "desc" },
    { offset: "50" },
  ];

  it("answers what the object path answers: same rows, order, values, total and next cursor; no secret shows", async () => {
    for (const query of cases) {
      const res = await t.api<Device[]>("GET", "/api/devices", { token: tenant.token, query });
      expect(res.status, JSON.stringify(query)).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const want = await expected(query);
      expect(res.body, JSON.stringify(query)).toEqual(want.items);
      expect(res.headers.get("records-total")).toBe(String(want.total));
      expect(res.headers.get(RECORDS_NEXT_HEADER) ?? null).toBe(want.next);
      for (const field of SECRET_FIELDS) expect(res.text).not.toContain(`"${field}"`);
    }
    const all = await t.api<Device[]>("GET", "/api/devices", { token: tenant.token, query: { limit: "100" } });
    const radios = all.body.flatMap((d) => d.interfaces).filter((i) => i.lte || i.wifi);
    expect(radios.length).toBeGreaterThanOrEqual(6);
    expect(radios.find((i) => i.lte)!.lte).toEqual({ apn: "internet" });
    expect(radios.find((i) => i.wifi)!.wifi).toEqual({ ssid: "tern" });
    expect(all.body.map((d) => d.createdAt)).toContain("2026-01-01T00:04:05.123Z");
    expect(all.body.map((d) => d.updatedAt)).toContain("2026-12-05T10:00:00.000Z");
  });

  it("walks the same pages by cursor, and narrows by ids the same way", async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 5; page++) {
      const query: Record<string, string> = { limit: "3", ...(after ? { after } : {}) };
      const res = await t.api<Device[]>("GET", "/api/devices", { token: tenant.token, query });
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
    const res = await t.api<Device[]>("GET", "/api/devices", { token: tenant.token, query: some });
    expect(res.body).toEqual((await expected(some)).items);
    expect(res.body).toHaveLength(4);
  });
});
