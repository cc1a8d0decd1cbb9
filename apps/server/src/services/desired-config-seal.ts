/**
 * Desired configs at rest. A compiled config carries tunnel and peer PSKs in
 * clear (the device needs them), so the row keeps it sealed with the server
 * key (AES-256-GCM, associated data bound to the device: a sealed config
 * copied to another device's row does not open). Only the dispatcher opens
 * it, to send an apply; what the rest of the server needs from it (which
 * tunnels are configured, the status period) is kept beside it in clear.
 */
import type { DeviceConfig } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import type { Keyring } from "../secrets/keyring.ts";

export const desiredConfigAad = (deviceId: string) => `desired-config:${deviceId}`;

/** The sealed text of a device's desired config (JSON inside). */
export function sealDesiredConfig(keyring: Keyring, deviceId: string, configJson: string): string {
  return keyring.encrypt(configJson, desiredConfigAad(deviceId));
}

/** Opens a sealed desired config; throws when it was not sealed for this device with this server key. */
export function openDesiredConfig(keyring: Keyring, deviceId: string, sealed: string): DeviceConfig {
  return JSON.parse(openDesiredConfigJson(keyring, deviceId, sealed)) as DeviceConfig;
}

/**
 * The JSON text inside a sealed desired config, as the compile stored it: an apply carries it as is (parsing
 * 8 KB and writing it out again for every job of a fan-out only made garbage).
 */
export function openDesiredConfigJson(keyring: Keyring, deviceId: string, sealed: string): string {
  return keyring.decrypt(sealed, desiredConfigAad(deviceId));
}

/** A device's desired config in clear, or null when it has none (tests and the dispatcher). */
export async function readDesiredConfig(db: Db, keyring: Keyring, deviceId: string): Promise<DeviceConfig | null> {
  const row = await db.selectFrom("devices").select("desired_config_enc").where("id", "=", deviceId).executeTakeFirst();
  return row?.desired_config_enc ? openDesiredConfig(keyring, deviceId, row.desired_config_enc) : null;
}

/**
 * Seals configs a server before migration 501 stored in clear
 * (`desired_config_legacy`), then empties that column. Runs at every start;
 * after the first it finds nothing. Several instances starting at once each
 * seal rows the others have not taken yet (`skip locked`).
 */
export async function sealLegacyDesiredConfigs(db: Db, keyring: Keyring): Promise<number> {
  let sealed = 0;
  for (;;) {
    const n = await db.transaction().execute(async (trx) => {
      const rows = await sql<{ id: string; config: string }>`select id, desired_config_legacy::text as config from devices
        where desired_config_legacy is not null order by id limit 500 for no key update skip locked`.execute(trx);
      for (const r of rows.rows) {
        await sql`update devices set desired_config_enc = ${sealDesiredConfig(keyring, r.id, r.config)},
            desired_config_legacy = null where id = ${r.id}::uuid`.execute(trx);
      }
      return rows.rows.length;
    });
    sealed += n;
    if (n < 500) return sealed;
  }
}
