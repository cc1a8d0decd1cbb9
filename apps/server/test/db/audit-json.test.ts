/**
 * Migration 20261206-101: an audit entry's `before` and `after` are `json`
 * instead of `jsonb`. Entries written before it read the same after it (and
 * after its down), as the audit list maps them, and new entries keep their
 * document's own key order.
 */
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import * as migration from "../../src/db/migrations/20261206-101-audit-json.ts";
import type { AuditLogRow } from "../../src/db/schema.ts";
import { auditEntryFromRow } from "../../src/services/audit.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261206-101: audit documents as json", () => {
  const t = useTestServer();

  const columnTypes = async () =>
    (
      await sql<{ column_name: string; data_type: string }>`
        select column_name, data_type from information_schema.columns
        where table_name = 'audit_log' and column_name in ('before', 'after') order by column_name`.execute(t.database.db)
    ).rows.map((r) => `${r.column_name} ${r.data_type}`);
  // Read as the audit list reads a row (auditEntryFromRow), by a statement without parameters: those the server's
  // connections keep prepared fail once after a column changes type under them (db/prepared-client.ts).
  const entries = async () =>
    (await sql<AuditLogRow>`select * from audit_log where action = 'approve' order by at, id`.execute(t.database.db)).rows.map(
      (row) => {
        const { resourceId, action, before, after } = auditEntryFromRow(row);
        return { resourceId, action, before, after };
      },
    );
  const approve = async (id: string) => {
    const res = await t.api("POST", "/api/devices/approve", { token: t.admin.token, body: { deviceIds: [id] } });
    expect(res.status, res.text).toBe(202);
  };

  it("keeps every entry's documents through down and up; entries read the same on either type", async () => {
    const db = t.database.db;
    expect(await columnTypes()).toEqual(["after json", "before json"]);
    await migration.down(db as never);
    expect(await columnTypes()).toEqual(["after jsonb", "before jsonb"]);
    const first = await insertValidDevice(t, { approved: false });
    await approve(first.id);
    const asJsonb = await entries();
    expect(asJsonb).toHaveLength(1);
    expect(asJsonb[0]).toMatchObject({ resourceId: first.id, action: "approve", after: { id: first.id, isApproved: true } });

    await migration.up(db as never);
    expect(await columnTypes()).toEqual(["after json", "before json"]);
    expect(await entries()).toEqual(asJsonb);
    const second = await insertValidDevice(t, { approved: false, wanIp: "192.0.2.2" });
    await approve(second.id);
    const both = await entries();
    expect(both.slice(0, 1)).toEqual(asJsonb);
    expect(both[1]).toMatchObject({ resourceId: second.id, before: { isApproved: false }, after: { isApproved: true } });
    // json keeps the text as written: the device document's keys in the order the API answers them.
    const read = await t.api<object>("GET", `/api/devices/${second.id}`, { token: t.admin.token });
    expect(Object.keys(both[1]!.after as object)).toEqual(Object.keys(read.body));

    await migration.down(db as never);
    expect(await entries()).toEqual(both);
    await migration.up(db as never);
    expect(await entries()).toEqual(both);
  });
});
