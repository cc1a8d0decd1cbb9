/**
 * Storage of live state (migration 20251124-801): device_state and
 * tunnel_latest leave room in each page so status updates rewrite rows in
 * place (HOT); so does devices (migration 20261126-801), whose connection
 * columns are written at every connect, disconnect and applied config. Checked on both engines; the speed-up itself is measured by
 * the benchmark (docs/bench.md), not asserted here.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { openTestDatabase } from "../support/test-database.ts";

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe("live state storage", () => {
  it("device_state, devices and tunnel_latest keep half of each page free for in-place updates", async () => {
    const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
      select relname, reloptions from pg_class where relname in ('device_state', 'devices', 'tunnel_latest')
      order by relname`.execute(handle.db);
    expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([
      ["device_state", ["fillfactor=50"]],
      ["devices", ["fillfactor=50"]],
      ["tunnel_latest", ["fillfactor=50"]],
    ]);
  });
});
