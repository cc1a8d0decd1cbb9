/**
 * An invitation row as POST /api/invitations writes it, with its token returned
 * instead of e-mailed: for tests that need members but no SMTP server. The
 * person still joins through the real POST /api/invitations/accept.
 */
import { randomUUID } from "node:crypto";
import type { Role } from "@tern/protocol";
import { hashSecretToken, newSecretToken } from "../../src/auth/secret-tokens.ts";
import type { Db } from "../../src/db/schema.ts";
import { INVITATION_TOKEN_PREFIX } from "../../src/services/accounts/invitations.ts";

export async function insertInvitation(
  db: Db,
  input: { orgId: string; scope: "organization" | "account"; email: string; role: Role; expiresAt?: Date },
): Promise<{ id: string; token: string }> {
  const org = await db.selectFrom("organizations").select("account_id").where("id", "=", input.orgId).executeTakeFirstOrThrow();
  const token = newSecretToken(INVITATION_TOKEN_PREFIX);
  const id = randomUUID();
  await db
    .insertInto("invitations")
    .values({
      id,
      account_id: org.account_id,
      organization_id: input.scope === "organization" ? input.orgId : null,
      email: input.email,
      role: input.role,
      token_hash: hashSecretToken(token),
      invited_by: "test",
      expires_at: input.expiresAt ?? new Date(Date.now() + 3600_000),
    })
    .execute();
  return { id, token };
}
