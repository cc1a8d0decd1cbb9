/**
 * Migration 20261205-201: `devices.interfaces_summary`, the interfaces as the
 * summary page shows them, kept by a trigger. It must equal what the page's
 * query computed from `interfaces` before (the same expression, inlined here)
 * after an insert, after every write of `interfaces` (the API's and a raw
 * UPDATE's), after writes that leave them alone, and, for rows written before
 * the migration, once it ran (down and up again).
 */
import type { DeviceInterface } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import * as migration from "../../src/db/migrations/20261205-201-device-interface-summary.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

/** The page query's mapping before the migration, as it was written there. */
const INLINE = sql`(select coalesce(json_agg(json_build_object(
    'id', e->'id', 'name', e->'name', 'type', e->'type', 'IPv4', e->'IPv4', 'IPv4Mask', e->'IPv4Mask',
    'isPublicAddressRateLimited',
      case when jsonb_typeof(e->'isPublicAddressRateLimited') = 'boolean' then e->'isPublicAddressRateLimited'
      else 'false'::jsonb end) order by n), '[]'::json)
  from jsonb_array_elements(d.interfaces) with ordinality as x(e, n))`;

describe("migration 20261205-201: devices.interfaces_summary", () => {
  const t = useTestServer();

  /** Each device's stored summary text beside what the inline mapping makes of its interfaces now. */
  async function both(ids: string[]) {
    const { rows } = await sql<{ id: string; stored: string; inline: string }>`
      select d.id, d.interfaces_summary::text as stored, ${INLINE}::text as inline
      from devices d where d.id = any(${`{${ids.join(",")}}`}::uuid[]) order by d.id`.execute(t.database.db);
    expect(rows).toHaveLength(ids.length);
    return rows;
  }

  it("equals the inline mapping after inserts, interface writes and other writes, and is filled by the migration", async () => {
    const devices = [];
    for (let i = 0; i < 4; i++) devices.push(await insertValidDevice(t, { approved: i % 2 === 0 }));
    const ids = devices.map((d) => d.id);
    for (const r of await both(ids)) {
      expect(r.stored).toBe(r.inline);
      expect(JSON.parse(r.stored).length).toBeGreaterThan(0);
    }

    // Interfaces rewritten: the flag unset, null or set, a second LAN renamed; then an UPDATE of other columns.
    const db = t.database.db;
    const row = await db.selectFrom("devices").select("interfaces").where("id", "=", ids[0]!).executeTakeFirstOrThrow();
    const variants = [
      (i: DeviceInterface) => ({ ...i, isPublicAddressRateLimited: true }),
      (i: DeviceInterface) => {
        const { isPublicAddressRateLimited: _, ...rest } = i;
        return rest;
      },
      (i: DeviceInterface) => ({ ...i, isPublicAddressRateLimited: null, name: 'lan "q" ✓' }),
    ];
    for (const [k, variant] of variants.entries()) {
      const interfaces = (row.interfaces as DeviceInterface[]).map(variant);
      await db
        .updateTable("devices")
        .set({ interfaces: toJson(interfaces) })
        .where("id", "=", ids[k]!)
        .execute();
    }
    await db.updateTable("devices").set({ hostname: "renamed", connection: "connected" }).where("id", "=", ids[3]!).execute();
    const after = await both(ids);
    for (const r of after) expect(r.stored).toBe(r.inline);
    expect(JSON.parse(after.find((r) => r.id === ids[0])!.stored)[0].isPublicAddressRateLimited).toBe(true);
    // Unset and null both show false; the renamed interface shows its new name.
    expect(JSON.parse(after.find((r) => r.id === ids[1])!.stored)[0].isPublicAddressRateLimited).toBe(false);
    const third = JSON.parse(after.find((r) => r.id === ids[2])!.stored);
    expect(third.map((i: { name: string }) => i.name)).toEqual(Array(third.length).fill('lan "q" ✓'));
    expect(third[0].isPublicAddressRateLimited).toBe(false);

    // Through the API: a LAN address changed by PUT shows in the summary page (the device's own interfaces).
    const own = await db.selectFrom("devices").select("interfaces").where("id", "=", ids[1]!).executeTakeFirstOrThrow();
    const stored = own.interfaces as DeviceInterface[];
    const lan = stored.find((i) => i.type === "LAN")!;
    const put = await t.api("PUT", `/api/devices/${ids[1]}`, {
      token: t.admin.token,
      body: { interfaces: stored.map((i) => (i.id === lan.id ? { ...i, IPv4: "10.99.0.1" } : i)) },
    });
    expect(put.status, put.text).toBe(200);
    const page = await t.api<{ id: string; interfaces: { id: string; IPv4: string }[] }[]>("GET", "/api/devices", {
      token: t.admin.token,
      query: { response: "summary", limit: "500" },
    });
    expect(page.status).toBe(200);
    expect(page.body.find((d) => d.id === ids[1])!.interfaces.find((i) => i.id === lan.id)!.IPv4).toBe("10.99.0.1");
    for (const r of await both(ids)) expect(r.stored).toBe(r.inline);

    // Rows written while the column did not exist get theirs from the migration.
    await migration.down(db as never);
    await db
      .updateTable("devices")
      .set({ interfaces: toJson([]) })
      .where("id", "=", ids[3]!)
      .execute();
    await migration.up(db as never);
    const migrated = await both(ids);
    for (const r of migrated) expect(r.stored).toBe(r.inline);
    expect(migrated.find((r) => r.id === ids[3])!.stored).toBe("[]");
  });
});
