/** Accounts: the customer above its organizations. */
import type { Account, AccountUpdate } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import type { AccountRow } from "../db/schema.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    country: row.country,
    companyType: row.company_type,
    trial_end: row.trial_end ? row.trial_end.toISOString() : null,
    plan: row.plan,
    limits: { devices: row.max_devices, organizations: row.max_organizations },
    createdAt: row.created_at.toISOString(),
  };
}

/** The accounts the caller belongs to (directly or through one of their organizations); a key: its org's account. */
export async function listAccounts(ctx: ServiceCtx): Promise<Account[]> {
  let query = ctx.db.selectFrom("accounts as a").selectAll("a").orderBy("a.created_at").orderBy("a.id");
  if (ctx.actor.kind === "user") {
    const userId = ctx.actor.userId!;
    query = query.where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom("memberships as m")
            .select("m.id")
            .where("m.user_id", "=", userId)
            .where("m.account_id", "=", eb.ref("a.id")),
        ),
        eb.exists(
          eb
            .selectFrom("memberships as m")
            .innerJoin("organizations as o", "o.id", "m.organization_id")
            .select("m.id")
            .where("m.user_id", "=", userId)
            .where("o.account_id", "=", eb.ref("a.id")),
        ),
      ]),
    );
  } else {
    query = query.where("a.id", "=", ctx.org.accountId);
  }
  return (await query.execute()).map(toAccount);
}

/** Changes the request's account (routes resolve `{id}` to it). */
export async function updateAccount(ctx: ServiceCtx, input: z.output<typeof AccountUpdate>): Promise<Account> {
  return inTransaction(ctx, async (tx) => {
    const before = toAccount(
      await tx.db.selectFrom("accounts").selectAll().where("id", "=", tx.org.accountId).forUpdate().executeTakeFirstOrThrow(),
    );
    const row = await tx.db
      .updateTable("accounts")
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.country !== undefined ? { country: input.country } : {}),
        ...(input.companyType !== undefined ? { company_type: input.companyType } : {}),
        updated_at: sql`now()`,
      })
      .where("id", "=", tx.org.accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const after = toAccount(row);
    await recordAudit(tx, { action: "update", resource: "accounts", resourceId: after.id, before, after });
    return after;
  });
}
