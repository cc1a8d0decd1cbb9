/**
 * `tern-server admin create-user`: a user straight in the database (no API,
 * no running server needed), optionally the owner of a new account with its
 * first organization, or a member of an existing account or organization.
 */
import { randomUUID } from "node:crypto";
import type { Role } from "@tern/protocol";
import { hashPassword } from "../../auth/password.ts";
import type { Db } from "../../db/schema.ts";
import { createAccountWithOwner } from "../bootstrap.ts";
import { recordOperatorAudit } from "./operator-audit.ts";

export type Membership =
  | { kind: "none" }
  | { kind: "new-account"; accountName: string; orgName: string }
  | { kind: "account"; accountId: string; role: Role }
  | { kind: "organization"; orgId: string; role: Role };

export interface CreateUserInput {
  email: string;
  name: string;
  password: string;
  passwordHashCost: number;
  membership: Membership;
}

export interface CreatedUser {
  userId: string;
  accountId: string | null;
  orgId: string | null;
}

/** Why a user could not be created (the command turns each into one line with the fix). */
export class CreateUserError extends Error {
  constructor(
    readonly reason: "email-taken" | "account-not-found" | "org-not-found",
    message: string,
  ) {
    super(message);
  }
}

export async function createUser(db: Db, input: CreateUserInput): Promise<CreatedUser> {
  // Hashing takes a while at production cost: outside the transaction (createAccountWithOwner hashes its own).
  const passwordHash = input.membership.kind === "new-account" ? "" : await hashPassword(input.password, input.passwordHashCost);
  return db.transaction().execute(async (trx) => {
    const taken = await trx.selectFrom("users").select("id").where("email", "=", input.email).executeTakeFirst();
    if (taken) throw new CreateUserError("email-taken", `a user with the e-mail ${input.email} exists`);
    const m = input.membership;
    let created: CreatedUser;
    if (m.kind === "new-account") {
      const ids = await createAccountWithOwner(trx, {
        accountName: m.accountName,
        orgName: m.orgName,
        email: input.email,
        userName: input.name,
        password: input.password,
        passwordHashCost: input.passwordHashCost,
      });
      created = ids;
    } else {
      let accountId: string | null = null;
      let orgId: string | null = null;
      if (m.kind === "account") {
        const account = await trx.selectFrom("accounts").select("id").where("id", "=", m.accountId).executeTakeFirst();
        if (!account) throw new CreateUserError("account-not-found", `no account with id ${m.accountId}`);
        accountId = account.id;
        const firstOrg = await trx
          .selectFrom("organizations")
          .select("id")
          .where("account_id", "=", accountId)
          .orderBy("created_at")
          .limit(1)
          .executeTakeFirst();
        orgId = firstOrg?.id ?? null;
      } else if (m.kind === "organization") {
        const org = await trx
          .selectFrom("organizations")
          .select(["id", "account_id"])
          .where("id", "=", m.orgId)
          .executeTakeFirst();
        if (!org) throw new CreateUserError("org-not-found", `no organization with id ${m.orgId}`);
        accountId = org.account_id;
        orgId = org.id;
      }
      const userId = randomUUID();
      await trx
        .insertInto("users")
        .values({ id: userId, email: input.email, name: input.name, password_hash: passwordHash, default_org_id: orgId })
        .execute();
      if (m.kind === "account" || m.kind === "organization")
        await trx
          .insertInto("memberships")
          .values({
            id: randomUUID(),
            user_id: userId,
            account_id: m.kind === "account" ? accountId : null,
            organization_id: m.kind === "organization" ? orgId : null,
            role: m.role,
          })
          .execute();
      created = { userId, accountId, orgId };
    }
    await recordOperatorAudit(trx, {
      action: "create",
      resource: "users",
      resourceId: created.userId,
      accountId: created.accountId,
      orgId: created.orgId,
      after: {
        email: input.email,
        name: input.name,
        membership:
          m.kind === "none" ? null : m.kind === "new-account" ? { scope: "account", role: "owner", newAccount: true } : m,
      },
    });
    return created;
  });
}
