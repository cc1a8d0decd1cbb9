/**
 * Invitations: members join an organization (or its account) by accepting an
 * invitation e-mailed to them, never by an owner's say-so alone. The answer to
 * inviting has the same shape for every address, so it never tells whether the
 * address belongs to a user (of this or another tenant). The token (256 random
 * bits, `tern_inv_…`) exists only in the e-mail; the server keeps its hash. It
 * works once, until TERN_INVITATION_TTL, and not after revocation.
 *
 * Accepting: an existing user accepts while signed in as the invited address;
 * a new person accepts by choosing a password, which creates the user.
 */
import { randomUUID } from "node:crypto";
import type { Invitation, Membership, Role } from "@tern/protocol";
import { type Selectable, sql } from "kysely";
import type { Actor, OrgRef, UserPrincipal } from "../../auth/access.ts";
import { hashPassword } from "../../auth/password.ts";
import { hashSecretToken, newSecretToken } from "../../auth/secret-tokens.ts";
import type { Db, InvitationsTable } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError, conflict, forbidden, invalidField, notFound } from "../../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { assertMayManageScope } from "../members.ts";
import { apiAddress, canSendMail, emailUnavailable, sendAccountMail } from "./account-mail.ts";

export const INVITATION_TOKEN_PREFIX = "tern_inv_";
type Row = Omit<Selectable<InvitationsTable>, "token_hash">;

const PUBLIC_COLUMNS = [
  "id",
  "account_id",
  "organization_id",
  "email",
  "role",
  "invited_by",
  "expires_at",
  "accepted_at",
  "accepted_user_id",
  "revoked_at",
  "created_at",
] as const;

const invalidToken = () =>
  new ApiError("INVALID_TOKEN", "the invitation is unknown, already used, revoked or expired; ask for a new one");

export function toInvitation(row: Row): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    scope: row.organization_id ? "organization" : "account",
    scopeId: row.organization_id ?? row.account_id,
    invitedBy: row.invited_by,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}

export const INVITATION_LIST: ListSpec = {
  fields: {
    id: { column: "id", type: "uuid" },
    email: { column: "email", type: "text" },
    role: { column: "role", type: "text" },
    scope: { column: sql`case when organization_id is null then 'account' else 'organization' end`, type: "text" },
    invitedBy: { column: "invited_by", type: "text" },
    expiresAt: { column: "expires_at", type: "timestamp" },
    createdAt: { column: "created_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "asc" },
  tiebreaker: "id",
};

/** Pending invitations to the request's organization or to its account. */
function pendingQuery(ctx: ServiceCtx) {
  return ctx.db
    .selectFrom("invitations")
    .select(PUBLIC_COLUMNS)
    .where((eb) =>
      eb.or([
        eb("organization_id", "=", ctx.org.id),
        eb.and([eb("organization_id", "is", null), eb("account_id", "=", ctx.org.accountId)]),
      ]),
    )
    .where("accepted_at", "is", null)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", new Date());
}

export async function listInvitations(ctx: ServiceCtx, query: ListQuery) {
  const { rows, total } = await runList(ctx.db, pendingQuery(ctx), query, INVITATION_LIST);
  return { items: rows.map(toInvitation), total };
}

/** Creates the invitation and e-mails its token to the address; needs SMTP (EMAIL_UNAVAILABLE otherwise). */
export async function createInvitation(
  ctx: ServiceCtx,
  input: { email: string; role: Role; scope: "organization" | "account" },
): Promise<Invitation> {
  assertMayManageScope(ctx, input.scope, "post");
  if (input.role === "owner" && ctx.role !== "owner") throw forbidden("only owners can invite owners");
  if (!canSendMail(ctx.config)) throw emailUnavailable("TERN_SMTP_URL is not set, and the invitation travels by e-mail");
  const token = newSecretToken(INVITATION_TOKEN_PREFIX);
  const invitation = await inTransaction(ctx, async (tx) => {
    // A new invitation replaces a pending one for the same address and scope.
    const replaced = await pendingQuery(tx)
      .where("email", "=", input.email)
      .where((eb) => (input.scope === "organization" ? eb("organization_id", "=", tx.org.id) : eb("organization_id", "is", null)))
      .execute();
    if (replaced.length) {
      await tx.db
        .updateTable("invitations")
        .set({ revoked_at: sql`now()` })
        .where(
          "id",
          "in",
          replaced.map((r) => r.id),
        )
        .execute();
      for (const r of replaced)
        await recordAudit(tx, { action: "revoke", resource: "invitations", resourceId: r.id, before: toInvitation(r) });
    }
    const row = await tx.db
      .insertInto("invitations")
      .values({
        id: randomUUID(),
        account_id: tx.org.accountId,
        organization_id: input.scope === "organization" ? tx.org.id : null,
        email: input.email,
        role: input.role,
        token_hash: hashSecretToken(token),
        invited_by: tx.actor.label,
        expires_at: new Date(Date.now() + tx.config.TERN_INVITATION_TTL * 1000),
      })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
    const created = toInvitation(row);
    await recordAudit(tx, { action: "invite", resource: "invitations", resourceId: created.id, after: created });
    return created;
  });
  try {
    await sendInvitationMail(ctx, invitation, token);
  } catch (err) {
    // An invitation nobody received is withdrawn, so it is not left pending and unusable.
    await inTransaction(ctx, async (tx) => {
      await tx.db.updateTable("invitations").set({ revoked_at: sql`now()` }).where("id", "=", invitation.id).execute();
      await recordAudit(tx, {
        action: "revoke",
        resource: "invitations",
        resourceId: invitation.id,
        before: invitation,
        after: { reason: "e-mail not sent" },
      });
    });
    throw err;
  }
  return invitation;
}

async function sendInvitationMail(ctx: ServiceCtx, invitation: Invitation, token: string) {
  const where =
    invitation.scope === "organization"
      ? `the organization "${ctx.org.name}"`
      : `the account of the organization "${ctx.org.name}"`;
  const days = Math.round(ctx.config.TERN_INVITATION_TTL / 86_400);
  await sendAccountMail(ctx.config, invitation.email, {
    subject: "[Tern] You are invited to join an organization",
    paragraphs: [
      `${ctx.actor.label} invited ${invitation.email} to ${where} on Tern, with the role "${invitation.role}".`,
      `To accept within ${days} day(s), POST the token below to ${apiAddress(ctx.config, "/invitations/accept")}: if you already have a Tern user with this address, as {"token": "…"} while signed in (Authorization: Bearer <your access token>); otherwise as {"token": "…", "name": "…", "password": "…"} to create your user with that password. The token works once. If you did not expect this, ignore this e-mail.`,
    ],
    code: token,
  });
}

/** Revokes a pending invitation; its token stops working. */
export async function revokeInvitation(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await pendingQuery(tx).where("id", "=", id).forUpdate().executeTakeFirst();
    if (!row) throw notFound("invitation");
    assertMayManageScope(tx, row.organization_id ? "organization" : "account", "del");
    await tx.db.updateTable("invitations").set({ revoked_at: sql`now()` }).where("id", "=", id).execute();
    await recordAudit(tx, { action: "revoke", resource: "invitations", resourceId: id, before: toInvitation(row) });
  });
}

export interface AcceptInput {
  token: string;
  name?: string;
  password?: string;
}

/** Accepts an invitation as the signed-in `user`, or (user null) as a new person who sets a password. */
export async function acceptInvitation(
  deps: Pick<AppDeps, "db" | "config">,
  input: AcceptInput,
  user: UserPrincipal | null,
): Promise<Membership> {
  if (!input.token.startsWith(INVITATION_TOKEN_PREFIX)) throw invalidToken();
  if (!user && !input.password)
    throw invalidField("password", "a password is required to create your user (or sign in to accept)");
  // scrypt before the transaction: it takes a while and needs no lock.
  const passwordHash = !user && input.password ? await hashPassword(input.password, deps.config.TERN_PASSWORD_HASH_COST) : null;
  return deps.db.transaction().execute(async (trx) => {
    const inv = await trx
      .selectFrom("invitations")
      .select(PUBLIC_COLUMNS)
      .where("token_hash", "=", hashSecretToken(input.token))
      .where("accepted_at", "is", null)
      .where("revoked_at", "is", null)
      .where("expires_at", ">", new Date())
      .forUpdate()
      .executeTakeFirst();
    if (!inv) throw invalidToken();
    const target = await acceptingUser(trx, inv, user, input, passwordHash);
    const membershipId = randomUUID();
    const inserted = await trx
      .insertInto("memberships")
      .values({
        id: membershipId,
        user_id: target.id,
        account_id: inv.organization_id ? null : inv.account_id,
        organization_id: inv.organization_id,
        role: inv.role,
      })
      .onConflict((oc) => oc.doNothing())
      .returning(["id", "created_at"])
      .executeTakeFirst();
    if (!inserted) throw conflict(`${inv.email} is already a member of this ${inv.organization_id ? "organization" : "account"}`);
    await trx
      .updateTable("invitations")
      .set({ accepted_at: sql`now()`, accepted_user_id: target.id })
      .where("id", "=", inv.id)
      .execute();
    const membership: Membership = {
      id: inserted.id,
      user: { id: target.id, email: target.email, name: target.name },
      scope: inv.organization_id ? "organization" : "account",
      scopeId: inv.organization_id ?? inv.account_id,
      role: inv.role,
      createdAt: inserted.created_at.toISOString(),
    };
    const actor: Actor = { kind: "user", label: target.email, userId: target.id, tokenId: null };
    const org = await auditOrg(trx, inv);
    const ctx = { db: trx, org, actor };
    await recordAudit(ctx, {
      action: "accept",
      resource: "invitations",
      resourceId: inv.id,
      after: { membership: membership.id },
    });
    await recordAudit(ctx, { action: "create", resource: "members", resourceId: membership.id, after: membership });
    return membership;
  });
}

async function acceptingUser(trx: Db, inv: Row, user: UserPrincipal | null, input: AcceptInput, passwordHash: string | null) {
  if (user) {
    // Exact comparison, as logins compare e-mails.
    if (user.email !== inv.email) throw forbidden("this invitation is for another e-mail address");
    return trx.selectFrom("users").select(["id", "email", "name"]).where("id", "=", user.userId).executeTakeFirstOrThrow();
  }
  const existing = await trx.selectFrom("users").select("id").where("email", "=", inv.email).executeTakeFirst();
  if (existing) throw new ApiError("SIGN_IN_REQUIRED", "this address already has a Tern user: sign in as it to accept");
  return trx
    .insertInto("users")
    .values({
      id: randomUUID(),
      email: inv.email,
      name: input.name ?? "",
      password_hash: passwordHash!,
      default_org_id: inv.organization_id,
    })
    .returning(["id", "email", "name"])
    .executeTakeFirstOrThrow();
}

/** The organization whose audit log records the acceptance: the invited one, else the account's oldest. */
async function auditOrg(trx: Db, inv: Row): Promise<OrgRef> {
  let q = trx.selectFrom("organizations").select(["id", "account_id", "name"]).where("account_id", "=", inv.account_id);
  if (inv.organization_id) q = q.where("id", "=", inv.organization_id);
  const org = await q.orderBy("created_at").orderBy("id").limit(1).executeTakeFirstOrThrow();
  return { id: org.id, accountId: org.account_id, name: org.name };
}
