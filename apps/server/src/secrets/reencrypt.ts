/**
 * Server key rotation: rewrites every value encrypted at rest with the
 * current server key. Values a previous key (TERN_SECRET_KEY_PREVIOUS)
 * encrypted are opened and sealed again; values already under the current
 * key are left as they are, so a second run changes nothing.
 *
 * The server runs it at start while previous keys are configured; a command
 * line tool can call `reencryptSecrets(db, keyring)` just as well. Each row is
 * written with a compare-and-set on its old value, so it runs safely beside
 * instances that write new secrets at the same time (those already use the
 * current key).
 *
 * Every encrypted value of the database is listed in ENCRYPTED_VALUES; a test
 * (test/secrets/key-rotation.test.ts) fails when a table gains an `*_enc`
 * column that is not listed here.
 */
import type { DeviceInterface } from "@tern/protocol";
import { sql } from "kysely";
import { appSecretAad } from "../appstore/types.ts";
import type { Db } from "../db/schema.ts";
import { desiredConfigAad } from "../services/desired-config-seal.ts";
import { secretAad as mfaSecretAad } from "../services/mfa/second-factor.ts";
import { webhookSecretAad } from "../services/notifications/settings.ts";
import { interfaceSecretRefs } from "../services/radio/interface-secrets.ts";
import { clientSecretAad } from "../services/sso/providers.ts";
import { verifierAad } from "../services/sso/sign-in.ts";
import type { Keyring } from "./keyring.ts";

/** A text column holding one keyring.encrypt() value per row. */
interface EncryptedColumn {
  kind: "column";
  table: string;
  /** The uuid primary key (rows are paged by it). */
  key: string;
  column: string;
  aad(key: string): string;
}

/** A jsonb column whose string fields ending in `Enc` are keyring.encrypt() values. */
interface EncryptedJsonFields {
  kind: "json-fields";
  table: string;
  key: string;
  column: string;
  aad(key: string): string;
}

/**
 * `devices.interfaces`: the encrypted radio secrets inside each interface's
 * `lte`/`wifi` object (services/radio/interface-secrets.ts), each with its own
 * associated data.
 */
interface EncryptedInterfaceSecrets {
  kind: "interface-secrets";
  table: "devices";
  key: "id";
  column: "interfaces";
}

export type EncryptedValue = EncryptedColumn | EncryptedJsonFields | EncryptedInterfaceSecrets;

export const ENCRYPTED_VALUES: readonly EncryptedValue[] = [
  { kind: "column", table: "peers", key: "id", column: "psk_enc", aad: (id) => id },
  { kind: "column", table: "tunnels", key: "id", column: "psk_enc", aad: (id) => id },
  { kind: "column", table: "devices", key: "id", column: "desired_config_enc", aad: desiredConfigAad },
  {
    kind: "column",
    table: "notification_settings",
    key: "organization_id",
    column: "webhook_secret_enc",
    aad: webhookSecretAad,
  },
  { kind: "json-fields", table: "purchased_apps", key: "id", column: "state", aad: appSecretAad },
  { kind: "column", table: "user_mfa", key: "user_id", column: "secret_enc", aad: mfaSecretAad },
  { kind: "column", table: "sso_providers", key: "id", column: "client_secret_enc", aad: clientSecretAad },
  { kind: "column", table: "sso_logins", key: "id", column: "code_verifier_enc", aad: verifierAad },
  { kind: "interface-secrets", table: "devices", key: "id", column: "interfaces" },
];

export interface ReencryptResult {
  /** Values rewritten with the current key. */
  reencrypted: number;
  /** Values that were already under the current key. */
  current: number;
  /** Values no key of the ring opens (a wrong or missing key): `table.column` and the row's key. */
  unreadable: { value: string; key: string }[];
}

const BATCH = 500;

/** Re-encrypts one value; counts it. Returns the new text, or null when it stays. */
function rotate(keyring: Keyring, text: string, aad: string, where: string, key: string, result: ReencryptResult): string | null {
  try {
    const next = keyring.reencrypt(text, aad);
    if (next === null) result.current++;
    return next;
  } catch {
    result.unreadable.push({ value: where, key });
    return null;
  }
}

async function rotateColumn(db: Db, keyring: Keyring, c: EncryptedColumn, result: ReencryptResult): Promise<void> {
  const [table, key, column] = [sql.table(c.table), sql.ref(c.key), sql.ref(c.column)];
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await sql<{ k: string; v: string }>`select ${key}::text as k, ${column} as v from ${table}
      where ${column} is not null and ${key} > ${after}::uuid order by ${key} limit ${BATCH}`.execute(db);
    for (const row of rows) {
      const next = rotate(keyring, row.v, c.aad(row.k), `${c.table}.${c.column}`, row.k, result);
      if (next === null) continue;
      // Compare-and-set: a value written meanwhile (with the current key) is not overwritten.
      const res =
        await sql`update ${table} set ${column} = ${next} where ${key} = ${row.k}::uuid and ${column} = ${row.v}`.execute(db);
      if (Number(res.numAffectedRows ?? 0) > 0) result.reencrypted++;
      else result.current++;
    }
    if (rows.length < BATCH) return;
    after = (rows[rows.length - 1] as { k: string }).k;
  }
}

async function rotateJsonFields(db: Db, keyring: Keyring, c: EncryptedJsonFields, result: ReencryptResult): Promise<void> {
  const [table, key, column] = [sql.table(c.table), sql.ref(c.key), sql.ref(c.column)];
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await sql<{ k: string; v: string }>`select ${key}::text as k, ${column}::text as v from ${table}
      where ${key} > ${after}::uuid order by ${key} limit ${BATCH}`.execute(db);
    for (const row of rows) {
      const state = JSON.parse(row.v) as Record<string, unknown>;
      let changed = 0;
      for (const [field, value] of Object.entries(state)) {
        if (!field.endsWith("Enc") || typeof value !== "string") continue;
        const next = rotate(keyring, value, c.aad(row.k), `${c.table}.${c.column}.${field}`, row.k, result);
        if (next !== null) {
          state[field] = next;
          changed++;
        }
      }
      if (changed === 0) continue;
      const res = await sql`update ${table} set ${column} = ${JSON.stringify(state)}::jsonb
        where ${key} = ${row.k}::uuid and ${column} = ${row.v}::jsonb`.execute(db);
      if (Number(res.numAffectedRows ?? 0) > 0) result.reencrypted += changed;
      else result.current += changed;
    }
    if (rows.length < BATCH) return;
    after = (rows[rows.length - 1] as { k: string }).k;
  }
}

async function rotateInterfaceSecrets(db: Db, keyring: Keyring, result: ReencryptResult): Promise<void> {
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await sql<{ k: string; v: string }>`select id::text as k, interfaces::text as v from devices
      where id > ${after}::uuid order by id limit ${BATCH}`.execute(db);
    for (const row of rows) {
      const interfaces = JSON.parse(row.v) as DeviceInterface[];
      let changed = 0;
      for (const ref of interfaceSecretRefs(row.k, interfaces)) {
        const iface = interfaces.find((i) => i.devId === ref.devId);
        const holder = iface?.[ref.kind] as Record<string, unknown> | undefined;
        if (!holder) continue;
        const next = rotate(
          keyring,
          holder[ref.field] as string,
          ref.aad,
          `devices.interfaces.${ref.kind}.${ref.field}`,
          row.k,
          result,
        );
        if (next !== null) {
          holder[ref.field] = next;
          changed++;
        }
      }
      if (changed === 0) continue;
      const res = await sql`update devices set interfaces = ${JSON.stringify(interfaces)}::jsonb
        where id = ${row.k}::uuid and interfaces = ${row.v}::jsonb`.execute(db);
      if (Number(res.numAffectedRows ?? 0) > 0) result.reencrypted += changed;
      else result.current += changed;
    }
    if (rows.length < BATCH) return;
    after = (rows[rows.length - 1] as { k: string }).k;
  }
}

/** Rewrites every encrypted value of the database with the keyring's current key. */
export async function reencryptSecrets(db: Db, keyring: Keyring): Promise<ReencryptResult> {
  const result: ReencryptResult = { reencrypted: 0, current: 0, unreadable: [] };
  for (const value of ENCRYPTED_VALUES) {
    if (value.kind === "column") await rotateColumn(db, keyring, value, result);
    else if (value.kind === "json-fields") await rotateJsonFields(db, keyring, value, result);
    else await rotateInterfaceSecrets(db, keyring, result);
  }
  return result;
}
