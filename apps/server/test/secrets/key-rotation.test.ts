/**
 * Rotating the server key: a server started with a new TERN_SECRET_KEY and the
 * old one in TERN_SECRET_KEY_PREVIOUS re-encrypts every stored secret with the
 * new key (a second run finds nothing to do), keeps accepting access JWTs the
 * old key signed until they expire, and signs new ones with the new key.
 * Without the old key those JWTs are refused. Every `*_enc` column of the
 * schema is covered by the re-encryption.
 */
import { randomBytes } from "node:crypto";
import type { DeviceInterface } from "@tern/protocol";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signAccessToken } from "../../src/auth/jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { createKeyring, type Keyring } from "../../src/secrets/keyring.ts";
import { ENCRYPTED_VALUES, reencryptSecrets } from "../../src/secrets/reencrypt.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { interfaceSecretRefs } from "../../src/services/radio/interface-secrets.ts";
import { type PlantedSecrets, plantSecrets } from "../support/planted-secrets.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();
const silent = pino({ level: "silent" });
let planted: PlantedSecrets;
let oldKey: string;
const newKey = randomBytes(32).toString("base64");
const servers: RunningServer[] = [];

beforeAll(async () => {
  planted = await plantSecrets(t);
  oldKey = t.deps.config.TERN_SECRET_KEY!;
});
afterAll(async () => {
  for (const s of servers) await s.close();
});

/** Every stored encrypted value with the associated data it was sealed with. */
async function encryptedValues(): Promise<{ where: string; text: string; aad: string }[]> {
  const out: { where: string; text: string; aad: string }[] = [];
  for (const v of ENCRYPTED_VALUES) {
    const rows = await sql<{ k: string; v: string }>`select ${sql.ref(v.key)}::text as k, ${sql.ref(v.column)}::text as v
      from ${sql.table(v.table)} where ${sql.ref(v.column)} is not null`.execute(t.database.db);
    for (const r of rows.rows) {
      if (v.kind === "column") out.push({ where: `${v.table}.${v.column}`, text: r.v, aad: v.aad(r.k) });
      else if (v.kind === "interface-secrets") {
        const interfaces = JSON.parse(r.v) as DeviceInterface[];
        for (const ref of interfaceSecretRefs(r.k, interfaces)) {
          const holder = interfaces.find((i) => i.devId === ref.devId)?.[ref.kind] as unknown as Record<string, string>;
          out.push({ where: `devices.interfaces.${ref.field}`, text: holder[ref.field]!, aad: ref.aad });
        }
      } else
        for (const [field, value] of Object.entries(JSON.parse(r.v) as Record<string, unknown>))
          if (field.endsWith("Enc") && typeof value === "string")
            out.push({ where: `${v.table}.${field}`, text: value, aad: v.aad(r.k) });
    }
  }
  return out;
}

const opens = (keyring: Keyring, v: { text: string; aad: string }) => {
  try {
    keyring.decrypt(v.text, v.aad);
    return true;
  } catch {
    return false;
  }
};

async function start(env: Record<string, string>): Promise<RunningServer> {
  const config = loadConfig({
    PORT: "0",
    TERN_PASSWORD_HASH_COST: "10",
    TERN_DATA_DIR: "/nonexistent-tests-use-no-data-dir",
    TERN_LOG_LEVEL: "silent",
    ...env,
  });
  const server = await startServer(config, silent, { database: t.database });
  servers.push(server);
  return server;
}

describe("server key rotation", () => {
  it("every *_enc column of the schema, and every app's encrypted state, is one the rotation rewrites", async () => {
    const columns = await sql<{ t: string; c: string }>`select table_name as t, column_name as c from information_schema.columns
      where table_schema = current_schema() and column_name like '%\\_enc'`.execute(t.database.db);
    const covered = new Set(ENCRYPTED_VALUES.map((v) => `${v.table}.${v.column}`));
    expect(columns.rows.length).toBeGreaterThanOrEqual(4);
    for (const { t: table, c } of columns.rows) expect(covered, `${table}.${c}`).toContain(`${table}.${c}`);
    const values = await encryptedValues();
    for (const where of [
      "peers.psk_enc",
      "tunnels.psk_enc",
      "devices.desired_config_enc",
      "notification_settings.webhook_secret_enc",
      "purchased_apps.privateKeyEnc",
      "devices.interfaces.pinEnc",
      "devices.interfaces.passwordEnc",
      "devices.interfaces.passphraseEnc",
    ])
      expect(values.map((v) => v.where)).toContain(where);
  });

  it("a start with the new key and the old one as previous re-encrypts every secret, and a second pass has nothing to do", async () => {
    const before = await encryptedValues();
    const oldRing = createKeyring(Buffer.from(oldKey, "base64"));
    const newRing = createKeyring(Buffer.from(newKey, "base64"));
    expect(before.every((v) => opens(oldRing, v))).toBe(true);

    const server = await start({ TERN_SECRET_KEY: newKey, TERN_SECRET_KEY_PREVIOUS: oldKey });
    const after = await encryptedValues();
    expect(after).toHaveLength(before.length);
    for (const v of after) {
      expect(opens(newRing, v), `${v.where} opens with the new key`).toBe(true);
      expect(opens(oldRing, v), `${v.where} no longer opens with the old key`).toBe(false);
    }
    // The plaintexts are unchanged.
    const peer = await t.database.db.selectFrom("peers").select(["id", "psk_enc"]).executeTakeFirstOrThrow();
    expect(newRing.decrypt(peer.psk_enc, peer.id)).toBe(planted.secrets.peerPsk);

    expect(await reencryptSecrets(t.database.db, server.deps.keyring)).toEqual({
      reencrypted: 0,
      current: before.length,
      unreadable: [],
    });
  });

  it("access JWTs the old key signed keep working until they expire; new ones are signed with the new key", async () => {
    const server = servers[0]!;
    const get = (token: string) =>
      fetch(`${server.url}/api/organizations/${t.admin.orgId}`, { headers: { authorization: `Bearer ${token}` } });
    // t.admin.token was signed by the old key (the test server's).
    expect((await get(t.admin.token)).status).toBe(200);
    const oldJwtKey = createKeyring(Buffer.from(oldKey, "base64")).jwtKey;
    const [claims] = [
      JSON.parse(Buffer.from(t.admin.token.split(".")[1]!, "base64url").toString()) as { sub: string; sid: string },
    ];
    const expired = await signAccessToken({ sub: claims.sub, sid: claims.sid }, oldJwtKey, 300, Date.now() - 3600_000);
    expect((await get(expired)).status).toBe(401);

    const login = await fetch(`${server.url}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: t.admin.email, password: t.admin.password }),
    });
    const fresh = ((await login.json()) as { accessToken: string }).accessToken;
    expect((await get(fresh)).status).toBe(200);
    // Only the new key verifies it.
    expect(t.deps.keyring.jwtVerifyKeys).not.toContain(server.deps.keyring.jwtKey);
    expect(server.deps.keyring.jwtKey).toBe(createKeyring(Buffer.from(newKey, "base64")).jwtKey);

    // Once the previous key is removed, the old key's tokens are refused and the secrets still open.
    const without = await start({ TERN_SECRET_KEY: newKey });
    expect(
      (
        await fetch(`${without.url}/api/organizations/${t.admin.orgId}`, {
          headers: { authorization: `Bearer ${t.admin.token}` },
        })
      ).status,
    ).toBe(401);
    expect(
      (await fetch(`${without.url}/api/organizations/${t.admin.orgId}`, { headers: { authorization: `Bearer ${fresh}` } }))
        .status,
    ).toBe(200);
    const hook = await fetch(`${without.url}/api/notificationsConf/webhook`, { headers: { authorization: `Bearer ${fresh}` } });
    expect(await hook.json()).toMatchObject({ secretSet: true });
  });

  it("reports values no configured key opens instead of guessing", async () => {
    const stranger = createKeyring(randomBytes(32));
    const peer = await t.database.db.selectFrom("peers").select("id").executeTakeFirstOrThrow();
    await t.database.db
      .updateTable("peers")
      .set({ psk_enc: stranger.encrypt("lost", peer.id) })
      .where("id", "=", peer.id)
      .execute();
    const ring = createKeyring(Buffer.from(newKey, "base64"), [Buffer.from(oldKey, "base64")]);
    const result = await reencryptSecrets(t.database.db, ring);
    expect(result.unreadable).toEqual([{ value: "peers.psk_enc", key: peer.id }]);
    expect(result.reencrypted).toBe(0);
  });

  it("TERN_SECRET_KEY_PREVIOUS must hold keys of the right size", () => {
    expect(() => loadConfig({ TERN_SECRET_KEY_PREVIOUS: "short" })).toThrow(/TERN_SECRET_KEY_PREVIOUS/);
    const two = loadConfig({ TERN_SECRET_KEY_PREVIOUS: `${oldKey}, ${newKey}` });
    expect(two.TERN_SECRET_KEY_PREVIOUS).toEqual([oldKey, newKey]);
  });
});
