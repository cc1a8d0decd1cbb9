/**
 * Recovery codes: 80 random bits each (16 base32 characters, shown as
 * xxxx-xxxx-xxxx-xxxx), so a plain SHA-256 is enough at rest: no slow hash is
 * needed against guessing a value of that entropy. Each opens one sign-in.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { hashSecretToken } from "../../auth/secret-tokens.ts";
import type { Db } from "../../db/schema.ts";

export const RECOVERY_CODE_COUNT = 10;
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function newRecoveryCode(): string {
  // 10 bytes = 80 bits = 16 base32 characters exactly.
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** The normal form the protocol's RecoveryCode schema produces (upper case, no dashes) → stored hash. */
export function hashRecoveryCode(normalized: string): string {
  return hashSecretToken(`tern-recovery:${normalized}`);
}

/** Replaces every recovery code of the user; returns the new ones as shown to the user (lower case, dashed). */
export async function replaceRecoveryCodes(db: Db, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.deleteFrom("mfa_recovery_codes").where("user_id", "=", userId).execute();
  await db
    .insertInto("mfa_recovery_codes")
    .values(codes.map((code) => ({ id: randomUUID(), user_id: userId, code_hash: hashRecoveryCode(code) })))
    .execute();
  return codes.map((c) => c.toLowerCase().match(/.{4}/g)!.join("-"));
}

/** Marks an unused code as used; false when there is none such. Run inside the transaction that holds the user's MFA row. */
export async function useRecoveryCode(db: Db, userId: string, normalized: string): Promise<boolean> {
  const used = await db
    .updateTable("mfa_recovery_codes")
    .set({ used_at: new Date() })
    .where("user_id", "=", userId)
    .where("code_hash", "=", hashRecoveryCode(normalized))
    .where("used_at", "is", null)
    .returning("id")
    .executeTakeFirst();
  return used !== undefined;
}

export async function recoveryCodesLeft(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom("mfa_recovery_codes")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
