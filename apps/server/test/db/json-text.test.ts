/**
 * db/json.ts's concatenated JSON: every piece is valid JSON whatever the
 * value (escapes, control characters, non-ASCII, NULL, numbers PostgreSQL
 * writes in exponent form, nested and empty objects), and reads as the value
 * `json_build_object` gives for the same inputs, keys in the same order.
 */
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { jsonAsIs, jsonObject, jsonQuoted, jsonString, jsonTimestamp } from "../../src/db/json.ts";
import { useTestServer } from "../support/test-server.ts";

const STRINGS = ["plain", 'quote " and \\ back', "line\nbreak\ttab", "nul-free \u0001 control", "ünïcode ✓ 🚀", "", "it's"];

describe("db/json.ts: JSON text concatenated by the database", () => {
  const t = useTestServer();

  it("reads as json_build_object's value, key order included, for every kind of value", async () => {
    const db = t.database.db;
    for (const text of [...STRINGS, null]) {
      const value = sql`${text}::text`;
      const number = sql`${text === null ? null : text.length * 1e-7}::float8`;
      const when = sql`${text === null ? null : "2026-12-06T23:43:05.432Z"}::timestamptz`;
      const id = sql`${text === null ? null : "7e000000-0000-4000-8000-000000000001"}::uuid`;
      const ours = jsonObject({
        s: jsonString(value),
        "key \"with\" 'quotes'": jsonAsIs(sql`${text === null ? null : text.length}::int`),
        n: jsonAsIs(number),
        b: jsonAsIs(sql`${text}::text is not null`),
        at: jsonTimestamp(when),
        id: jsonQuoted(id),
        j: jsonAsIs(sql`${JSON.stringify({ z: text, a: [1, 2] })}::jsonb`),
        nested: jsonObject({ inner: jsonString(value), none: jsonAsIs(sql`null::int`) }),
        empty: jsonObject({}),
      });
      const theirs = sql`json_build_object(
        's', ${value}, 'key "with" ''quotes''', ${text === null ? null : text.length}::int, 'n', ${number},
        'b', ${text}::text is not null, 'at', to_char(${when} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'id', ${id}, 'j', ${JSON.stringify({ z: text, a: [1, 2] })}::jsonb,
        'nested', json_build_object('inner', ${value}, 'none', null::int), 'empty', json_build_object())::text`;
      const { rows } = await sql<{ ours: string; theirs: string }>`select ${ours} as ours, ${theirs} as theirs`.execute(db);
      const [row] = rows;
      const parsed = JSON.parse(row!.ours);
      expect(parsed, row!.ours).toEqual(JSON.parse(row!.theirs));
      expect(Object.keys(parsed)).toEqual(Object.keys(JSON.parse(row!.theirs)));
      expect(parsed.s).toBe(text);
      expect(parsed.nested).toEqual({ inner: text, none: null });
    }
  });

  it("writes numbers as JSON numbers, small and large", async () => {
    for (const n of [0, -1.5, 1e-7, 123456789012, 1e21, 23.41]) {
      const { rows } = await sql<{ json: string }>`select ${jsonObject({ n: jsonAsIs(sql`${n}::float8`) })} as json`.execute(
        t.database.db,
      );
      expect(JSON.parse(rows[0]!.json)).toEqual({ n });
    }
  });
});
