/**
 * The limits of an account's plan (accounts.max_devices, max_organizations;
 * null = unlimited, every self-hosted account). Checked inside the
 * transaction that adds: the account row is locked first, so two additions
 * at once cannot both take the last place.
 */
import type { Db } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";

type Limit = "devices" | "organizations";

const limitReached = (what: Limit, max: number) =>
  new ApiError("ACCOUNT_LIMIT", `the account's plan allows at most ${max} ${what}; remove one or change the plan`, [
    { path: what, message: `limit ${max} reached` },
  ]);

async function lockedLimits(db: Db, accountId: string) {
  return db
    .selectFrom("accounts")
    .select(["max_devices", "max_organizations"])
    .where("id", "=", accountId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** Throws ACCOUNT_LIMIT when the account cannot have `adding` more organizations. */
export async function assertOrganizationRoom(db: Db, accountId: string, adding = 1): Promise<void> {
  const { max_organizations: max } = await lockedLimits(db, accountId);
  if (max === null) return;
  const { n } = await db
    .selectFrom("organizations")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  if (Number(n) + adding > max) throw limitReached("organizations", max);
}

/**
 * How many more devices the account may have; null = unlimited. `approvedOnly`:
 * count only approved devices (approval); else every device, waiting ones too
 * (registration of a new router, so a trial cannot pile up waiting devices).
 */
export async function deviceRoom(
  db: Db,
  accountId: string,
  approvedOnly: boolean,
): Promise<{ room: number; max: number } | null> {
  const { max_devices: max } = await lockedLimits(db, accountId);
  if (max === null) return null;
  let query = db
    .selectFrom("devices as d")
    .innerJoin("organizations as o", "o.id", "d.organization_id")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("o.account_id", "=", accountId);
  if (approvedOnly) query = query.where("d.is_approved", "=", true);
  const { n } = await query.executeTakeFirstOrThrow();
  return { room: Math.max(0, max - Number(n)), max };
}

/** Throws ACCOUNT_LIMIT when the account cannot have `adding` more devices (see deviceRoom). */
export async function assertDeviceRoom(db: Db, accountId: string, adding: number, approvedOnly: boolean): Promise<void> {
  const limit = await deviceRoom(db, accountId, approvedOnly);
  if (limit && adding > limit.room) throw limitReached("devices", limit.max);
}

/** The ACCOUNT_LIMIT error of devices (for per-device refusals in batches). */
export const deviceLimitReached = (max: number) => limitReached("devices", max);
