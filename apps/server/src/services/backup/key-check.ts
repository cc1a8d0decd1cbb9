/**
 * Does this server key open the database's encrypted values? Tries one sealed
 * desired config, else one tunnel or peer PSK. A wrong key is otherwise found
 * only when the first device is sent its config.
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { createKeyring } from "../../secrets/keyring.ts";
import { openDesiredConfig } from "../desired-config-seal.ts";

export type KeyCheck = "opens" | "does-not-open" | "nothing-encrypted";

export async function checkKeyOpensDatabase(db: Db, key: Buffer): Promise<KeyCheck> {
  const keyring = createKeyring(key);
  const device = await db
    .selectFrom("devices")
    .select(["id", "desired_config_enc"])
    .where("desired_config_enc", "is not", null)
    .limit(1)
    .executeTakeFirst();
  const tryOpen = (fn: () => unknown): KeyCheck => {
    try {
      fn();
      return "opens";
    } catch {
      return "does-not-open";
    }
  };
  if (device?.desired_config_enc) return tryOpen(() => openDesiredConfig(keyring, device.id, device.desired_config_enc!));
  const psk = await sql<{ id: string; psk_enc: string }>`
    (select id::text, psk_enc from tunnels where psk_enc is not null limit 1)
    union all (select id::text, psk_enc from peers where psk_enc is not null limit 1) limit 1`.execute(db);
  const row = psk.rows[0];
  if (row) return tryOpen(() => keyring.decrypt(row.psk_enc, row.id));
  return "nothing-encrypted";
}
