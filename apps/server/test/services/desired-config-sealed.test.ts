/**
 * Secrets at rest in desired configs: a compiled config carries tunnel and
 * peer PSKs, so the device row stores it sealed with the server key. No PSK
 * is readable from the database; the dispatcher (and only a holder of the
 * server key) opens it; configs an older server stored in clear are sealed at
 * start.
 */
import { DeviceConfig } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import {
  openDesiredConfig,
  readDesiredConfig,
  sealDesiredConfig,
  sealLegacyDesiredConfigs,
} from "../../src/services/desired-config-seal.ts";
import { useTestServer } from "../support/test-server.ts";
import { createPeer, createTunnels, peerTunnelBody, tunnelBody, wanDevice } from "../support/tunnels.ts";

const t = useTestServer();

/** Every row of the tables a config or its secrets could end up in, as text. */
async function databaseText(): Promise<string> {
  const tables = ["devices", "jobs", "audit_log", "tunnels", "peers"] as const;
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await sql`select to_jsonb(x)::text as row from ${sql.table(table)} x`.execute(t.database.db);
    parts.push(...rows.rows.map((r) => (r as { row: string }).row));
  }
  return parts.join("\n");
}

describe("desired configs at rest", () => {
  it("hold no PSK in clear anywhere in the database, yet the device gets them", async () => {
    const [a, b] = [await wanDevice(t), await wanDevice(t)];
    const peer = await createPeer(t, { psk: "peer-psk-that-must-not-leak" });
    const created = await createTunnels(t, [tunnelBody(a, b), peerTunnelBody(a, peer.id)]);
    const tunnelPsk = t.deps.keyring.decrypt(
      (
        await t.database.db
          .selectFrom("tunnels")
          .select("psk_enc")
          .where("id", "=", created.tunnels[0]!.id)
          .executeTakeFirstOrThrow()
      ).psk_enc!,
      created.tunnels[0]!.id,
    );
    expect(tunnelPsk.length).toBeGreaterThan(20);

    const text = await databaseText();
    expect(text).not.toContain(tunnelPsk);
    expect(text).not.toContain("peer-psk-that-must-not-leak");
    const row = await t.database.db
      .selectFrom("devices")
      .select(["desired_config_enc", "desired_tunnel_ids", "desired_hash"])
      .where("id", "=", a.id)
      .executeTakeFirstOrThrow();
    expect(row.desired_config_enc).toMatch(/^v1\./);
    expect([...row.desired_tunnel_ids].sort()).toEqual(created.tunnels.map((x) => x.id).sort());

    // Opened with the server key: the config the dispatcher sends, PSKs included.
    const config = DeviceConfig.parse(await readDesiredConfig(t.database.db, t.deps.keyring, a.id));
    const psks = config.tunnels.map((x) => x.auth.psk).sort();
    expect(psks).toEqual([tunnelPsk, "peer-psk-that-must-not-leak"].sort());
  });

  it("a sealed config opens only for its own device", async () => {
    const [a, b] = [await wanDevice(t), await wanDevice(t)];
    await createTunnels(t, tunnelBody(a, b));
    const sealed = (
      await t.database.db.selectFrom("devices").select("desired_config_enc").where("id", "=", a.id).executeTakeFirstOrThrow()
    ).desired_config_enc!;
    expect(() => openDesiredConfig(t.deps.keyring, b.id, sealed)).toThrow();
    expect(openDesiredConfig(t.deps.keyring, a.id, sealed).tunnels).toHaveLength(1);
  });

  it("configs an older server stored in clear are sealed at start and the clear copy emptied", async () => {
    const [a, b] = [await wanDevice(t), await wanDevice(t)];
    await createTunnels(t, tunnelBody(a, b));
    const config = await readDesiredConfig(t.database.db, t.deps.keyring, a.id);
    // As migration 501 leaves a row written before it: the clear config in the legacy column.
    await sql`update devices set desired_config_legacy = ${JSON.stringify(config)}::jsonb, desired_config_enc = null
      where id = ${a.id}::uuid`.execute(t.database.db);
    expect(await sealLegacyDesiredConfigs(t.database.db, t.deps.keyring)).toBe(1);
    const after = await sql<{ legacy: unknown; enc: string | null }>`select desired_config_legacy as legacy,
        desired_config_enc as enc from devices where id = ${a.id}::uuid`.execute(t.database.db);
    expect(after.rows[0]?.legacy).toBeNull();
    expect(openDesiredConfig(t.deps.keyring, a.id, after.rows[0]!.enc!)).toEqual(config);
    expect(await sealLegacyDesiredConfigs(t.database.db, t.deps.keyring)).toBe(0);
    expect(sealDesiredConfig(t.deps.keyring, a.id, "{}")).not.toBe(sealDesiredConfig(t.deps.keyring, a.id, "{}"));
  });
});
