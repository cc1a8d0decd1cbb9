/**
 * Identity work on a live link, in the device's transactions: binding the key
 * of a device registered before keys existed (its device token vouches for
 * the first key it proves), and re-keying (the current key, proven by the
 * link, and the new key both sign the new key with the link's challenge).
 */
import { type Rekey, rekeyProofText } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../../../db/schema.ts";
import type { AppDeps } from "../../../deps.ts";
import type { LinkDevice } from "../../../gateway/upgrade.ts";
import { recordAudit } from "../../audit.ts";
import { systemCtx } from "../../context.ts";
import { verifyDeviceSignature } from "./signatures.ts";

function deviceCtx(deps: AppDeps, trx: Db, device: LinkDevice) {
  const org = { id: device.orgId, accountId: device.accountId, name: device.orgName };
  return {
    ...systemCtx(deps, org, { kind: "device" as const, label: `device:${device.id}`, userId: null, tokenId: null }),
    db: trx,
  };
}

/**
 * In the hello's transaction (device row locked): true when the device still holds `publicKey`, or
 * held none and now binds it (audited). False when the key changed since the upgrade (reset, re-key).
 */
export async function holdsOrBindsKey(
  deps: AppDeps,
  trx: Db,
  device: LinkDevice,
  stored: string | null,
  publicKey: string,
): Promise<boolean> {
  if (stored !== null) return stored === publicKey;
  if (device.publicKey !== null) return false;
  const taken = await trx
    .selectFrom("devices")
    .select("id")
    .where("organization_id", "=", device.orgId)
    .where("public_key", "=", publicKey)
    .executeTakeFirst();
  if (taken) return false;
  await trx.updateTable("devices").set({ public_key: publicKey }).where("id", "=", device.id).execute();
  await recordAudit(deviceCtx(deps, trx, device), {
    action: "identity-bind",
    resource: "devices",
    resourceId: device.id,
    after: { publicKey, how: "first key proven by a device registered before device keys" },
  });
  return true;
}

export type RekeyOutcome = { ok: true } | { ok: false; message: string };

/** Replaces the device's key with `rekey.publicKey` when both signatures verify and `current` is still its key. */
export async function rekeyDevice(
  deps: AppDeps,
  device: LinkDevice,
  link: { nonce: string; publicKey: string },
  rekey: Rekey,
): Promise<RekeyOutcome> {
  const text = rekeyProofText({ nonce: link.nonce, deviceId: device.id, publicKey: rekey.publicKey });
  if (!verifyDeviceSignature(link.publicKey, text, rekey.signature))
    return { ok: false, message: "the re-key is not signed by the device's current key" };
  if (!verifyDeviceSignature(rekey.publicKey, text, rekey.newKeySignature))
    return { ok: false, message: "the re-key is not signed by the new key" };
  if (rekey.publicKey === link.publicKey) return { ok: false, message: "the new key is the current key" };
  return deps.db.transaction().execute(async (trx): Promise<RekeyOutcome> => {
    const row = await trx
      .selectFrom("devices")
      .select(["public_key", "is_approved"])
      .where("id", "=", device.id)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!row?.is_approved || row.public_key !== link.publicKey)
      return { ok: false, message: "the device's identity changed since this link proved it" };
    const taken = await trx
      .selectFrom("devices")
      .select("id")
      .where("organization_id", "=", device.orgId)
      .where("public_key", "=", rekey.publicKey)
      .executeTakeFirst();
    if (taken) return { ok: false, message: "the new key belongs to another device" };
    await trx
      .updateTable("devices")
      .set({ public_key: rekey.publicKey, updated_at: sql`now()` })
      .where("id", "=", device.id)
      .execute();
    await recordAudit(deviceCtx(deps, trx, device), {
      action: "rekey",
      resource: "devices",
      resourceId: device.id,
      before: { publicKey: link.publicKey },
      after: { publicKey: rekey.publicKey },
    });
    return { ok: true };
  });
}
