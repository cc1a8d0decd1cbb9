/**
 * First start on an empty database: an account, an organization and an owner
 * of the account. Runs under a transaction-scoped advisory lock so two
 * instances starting together create them once.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { DEFAULT_TUNNEL_RANGE } from "@tern/protocol";
import { sql } from "kysely";
import { hashPassword } from "../auth/password.ts";
import type { Db } from "../db/schema.ts";

export const DEFAULT_ADMIN_EMAIL = "admin@localhost";
/** Arbitrary constant naming the bootstrap lock among advisory locks. */
const BOOTSTRAP_LOCK = 7_301_001;

export interface BootstrapOptions {
  email?: string;
  password?: string;
  passwordHashCost: number;
}

export type BootstrapResult =
  | { created: false }
  | { created: true; email: string; accountId: string; orgId: string; userId: string; generatedPassword: string | null };

export interface NewTenant {
  accountName: string;
  orgName: string;
  email: string;
  userName?: string;
  password: string;
  passwordHashCost: number;
}

/** An account with one organization and an owner of the account (first start; tests make more tenants with it). */
export async function createAccountWithOwner(db: Db, input: NewTenant) {
  const accountId = randomUUID();
  const orgId = randomUUID();
  const userId = randomUUID();
  await db.insertInto("accounts").values({ id: accountId, name: input.accountName }).execute();
  await db
    .insertInto("organizations")
    .values({ id: orgId, account_id: accountId, name: input.orgName, tunnel_range: DEFAULT_TUNNEL_RANGE })
    .execute();
  await db
    .insertInto("users")
    .values({
      id: userId,
      email: input.email,
      name: input.userName ?? "",
      password_hash: await hashPassword(input.password, input.passwordHashCost),
      default_org_id: orgId,
    })
    .execute();
  await db
    .insertInto("memberships")
    .values({ id: randomUUID(), user_id: userId, account_id: accountId, organization_id: null, role: "owner" })
    .execute();
  return { accountId, orgId, userId };
}

export async function bootstrapFirstAdmin(db: Db, options: BootstrapOptions): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`.execute(trx);
    const anyUser = await trx.selectFrom("users").select("id").limit(1).executeTakeFirst();
    if (anyUser) return { created: false };

    const email = options.email ?? DEFAULT_ADMIN_EMAIL;
    const generatedPassword = options.password ? null : randomBytes(18).toString("base64url");
    const { accountId, orgId, userId } = await createAccountWithOwner(trx, {
      accountName: "Default account",
      orgName: "Default organization",
      email,
      userName: "Administrator",
      password: options.password ?? generatedPassword!,
      passwordHashCost: options.passwordHashCost,
    });
    await trx
      .insertInto("audit_log")
      .values({
        id: randomUUID(),
        account_id: accountId,
        organization_id: orgId,
        actor: "system",
        actor_user_id: null,
        actor_token_id: null,
        action: "bootstrap",
        resource: "accounts",
        resource_id: accountId,
        before: null,
        after: JSON.stringify({ account: accountId, organization: orgId, admin: email }),
      })
      .execute();
    return { created: true, email, accountId, orgId, userId, generatedPassword };
  });
}
