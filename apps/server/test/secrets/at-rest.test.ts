/**
 * Secrets at rest: one of every resource that carries a secret is created
 * through the API (peer and tunnel PSKs, the desired configs that carry them,
 * the webhook secret, the remote-vpn key, access/registration/device/refresh
 * tokens, passwords), then every row of every table is read as text and
 * searched for each plaintext: none is found. And no GET of the API, with any
 * of the created ids in its path, returns one of them.
 */
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { type PlantedSecrets, plantSecrets } from "../support/planted-secrets.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();
let planted: PlantedSecrets;

beforeAll(async () => {
  planted = await plantSecrets(t);
});

/** Every table of the database (the migrator's own included), each row as JSON text. */
async function everyRow(): Promise<{ table: string; text: string }[]> {
  const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`.execute(t.database.db);
  const rows: { table: string; text: string }[] = [];
  for (const { name } of tables.rows) {
    const r = await sql<{ row: string }>`select to_jsonb(x)::text as row from ${sql.table(name)} x`.execute(t.database.db);
    rows.push(...r.rows.map((x) => ({ table: name, text: x.row })));
  }
  return rows;
}

describe("secrets at rest", () => {
  it("no plaintext secret is in any column of any table", async () => {
    const rows = await everyRow();
    const tables = new Set(rows.map((r) => r.table));
    // The scan saw the rows that hold the secrets' encrypted or hashed forms.
    for (const table of [
      "peers",
      "tunnels",
      "devices",
      "notification_settings",
      "purchased_apps",
      "access_tokens",
      "registration_tokens",
      "sessions",
      "users",
      "audit_log",
      "jobs",
    ]) {
      expect(tables, table).toContain(table);
    }
    expect(Object.keys(planted.secrets).length).toBeGreaterThanOrEqual(12);
    for (const [name, secret] of Object.entries(planted.secrets)) {
      const found = rows.filter((r) => r.text.includes(secret)).map((r) => r.table);
      expect(found, `${name} stored in clear`).toEqual([]);
    }
  });

  it("the PSKs are in the sealed desired configs (so the scan above looked where they would be)", async () => {
    const sealed = await t.database.db
      .selectFrom("devices")
      .select("desired_config_enc")
      .where("desired_config_enc", "is not", null)
      .execute();
    const opened = sealed.map((r) => r.desired_config_enc!).join("\n");
    expect(opened).toMatch(/^v1\./);
    const texts = await Promise.all(
      (
        await t.database.db
          .selectFrom("devices")
          .select(["id", "desired_config_enc"])
          .where("desired_config_enc", "is not", null)
          .execute()
      ).map((r) => t.deps.keyring.decrypt(r.desired_config_enc!, `desired-config:${r.id}`)),
    );
    expect(texts.join("\n")).toContain(planted.secrets.peerPsk);
    expect(texts.join("\n")).toContain(planted.secrets.tunnelPsk);
  });

  it("no GET of the API returns one", async () => {
    type Operation = { parameters?: { name: string; in: string }[] };
    const doc = (await t.api<{ paths: Record<string, { get?: Operation }> }>("GET", "/api/openapi.json")).body;
    const gets = Object.entries(doc.paths).flatMap(([path, methods]) => (methods.get ? [{ path, op: methods.get }] : []));
    expect(gets.length).toBeGreaterThan(20);
    let answered = 0;
    for (const { path: template, op } of gets) {
      const paths = template.includes("{") ? planted.ids.map((id) => template.replace(/\{\w+\}/g, id)) : [template];
      // Also a whole page (and the stored rather than live view) where the operation takes those parameters:
      // every other query field is refused as unknown.
      const takes = new Set((op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name));
      const wide = {
        ...(takes.has("limit") ? { limit: "500" } : {}),
        ...(takes.has("live") ? { live: "false" } : {}),
      };
      const queries = Object.keys(wide).length > 0 ? [{}, wide] : [{}];
      for (const path of paths) {
        for (const query of queries) {
          const res = await t.api("GET", path, { token: t.admin.token, query });
          expect(res.status, `GET ${path}`).toBeLessThan(500);
          if (res.status === 200) answered++;
          for (const [name, secret] of Object.entries(planted.secrets)) {
            expect(res.text.includes(secret), `GET ${path} returned ${name}`).toBe(false);
          }
        }
      }
    }
    // The resources that hold secrets were really read (not just 404s).
    expect(answered).toBeGreaterThan(gets.length);
    for (const path of [
      "/api/peers",
      "/api/tunnels",
      "/api/notificationsConf/webhook",
      "/api/appstore/purchased",
      "/api/accesstokens",
      "/api/tokens",
    ]) {
      expect((await t.api("GET", path, { token: t.admin.token })).status, path).toBe(200);
    }
  });
});
