/**
 * OpenID Connect identity providers of an organization, managed by its owners
 * (the `members` permission: a provider decides who becomes a member). The
 * client secret is encrypted at rest with the keyring and never returned.
 */
import { randomUUID } from "node:crypto";
import type { SsoProvider, SsoProviderCreate, SsoProviderUpdate } from "@tern/protocol";
import type { Selectable } from "kysely";
import { sql } from "kysely";
import type { z } from "zod";
import { toJson } from "../../db/json.ts";
import type { SsoProvidersTable } from "../../db/schema.ts";
import { conflict, forbidden, invalidField, notFound } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { forgetOidcConfig } from "./oidc.ts";

export type SsoProviderRow = Selectable<SsoProvidersTable>;

export const clientSecretAad = (providerId: string) => `sso-provider:${providerId}`;
export const CALLBACK_PATH = "/api/sso/callback";

export function toSsoProvider(row: SsoProviderRow, publicUrl: string | undefined): SsoProvider {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.client_id,
    allowedDomains: row.allowed_domains,
    defaultRole: row.default_role,
    membershipScope: row.membership_scope,
    enabled: row.enabled,
    redirectUri: publicUrl ? `${publicUrl}${CALLBACK_PATH}` : null,
    startUrl: publicUrl ? `${publicUrl}/api/sso/providers/${row.id}/start` : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function assertIssuerAllowed(ctx: ServiceCtx, issuer: string | undefined) {
  if (issuer?.startsWith("http://") && !ctx.config.TERN_SSO_ALLOW_HTTP_ISSUER) {
    throw invalidField("issuer", "the issuer must be an https:// URL (http only with TERN_SSO_ALLOW_HTTP_ISSUER=true)");
  }
}

/** Joining the whole account is the account owners' decision. */
function assertScopeAllowed(ctx: ServiceCtx, scope: "organization" | "account" | undefined) {
  if (scope === "account" && ctx.accountRole !== "owner") {
    throw forbidden("only owners of the account can let new users join the whole account");
  }
}

function uniqueName<T>(promise: Promise<T>, name: string | undefined): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505") throw conflict(`an identity provider named "${name}" already exists in this organization`);
    throw err;
  });
}

async function loadProvider(ctx: ServiceCtx, id: string, lock = false): Promise<SsoProviderRow> {
  let query = ctx.db.selectFrom("sso_providers").selectAll().where("id", "=", id).where("organization_id", "=", ctx.org.id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("identity provider");
  return row;
}

export async function listSsoProviders(ctx: ServiceCtx): Promise<SsoProvider[]> {
  const rows = await ctx.db
    .selectFrom("sso_providers")
    .selectAll()
    .where("organization_id", "=", ctx.org.id)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((r) => toSsoProvider(r, ctx.config.TERN_PUBLIC_URL));
}

export async function getSsoProvider(ctx: ServiceCtx, id: string): Promise<SsoProvider> {
  return toSsoProvider(await loadProvider(ctx, id), ctx.config.TERN_PUBLIC_URL);
}

export async function createSsoProvider(ctx: ServiceCtx, input: z.output<typeof SsoProviderCreate>): Promise<SsoProvider> {
  assertIssuerAllowed(ctx, input.issuer);
  assertScopeAllowed(ctx, input.membershipScope);
  return inTransaction(ctx, async (tx) => {
    const id = randomUUID();
    const row = await uniqueName(
      tx.db
        .insertInto("sso_providers")
        .values({
          id,
          organization_id: tx.org.id,
          name: input.name,
          issuer: input.issuer,
          client_id: input.clientId,
          client_secret_enc: tx.keyring.encrypt(input.clientSecret, clientSecretAad(id)),
          allowed_domains: toJson([...new Set(input.allowedDomains)]),
          default_role: input.defaultRole,
          membership_scope: input.membershipScope,
          enabled: input.enabled,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
      input.name,
    );
    const provider = toSsoProvider(row, tx.config.TERN_PUBLIC_URL);
    await recordAudit(tx, { action: "create", resource: "sso", resourceId: id, after: provider });
    return provider;
  });
}

export async function updateSsoProvider(
  ctx: ServiceCtx,
  id: string,
  input: z.output<typeof SsoProviderUpdate>,
): Promise<SsoProvider> {
  assertIssuerAllowed(ctx, input.issuer);
  assertScopeAllowed(ctx, input.membershipScope);
  return inTransaction(ctx, async (tx) => {
    const beforeRow = await loadProvider(tx, id, true);
    // Widening an account-wide provider is the account owners' business too.
    assertScopeAllowed(tx, beforeRow.membership_scope);
    const row = await uniqueName(
      tx.db
        .updateTable("sso_providers")
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.issuer !== undefined ? { issuer: input.issuer } : {}),
          ...(input.clientId !== undefined ? { client_id: input.clientId } : {}),
          ...(input.clientSecret !== undefined
            ? { client_secret_enc: tx.keyring.encrypt(input.clientSecret, clientSecretAad(id)) }
            : {}),
          ...(input.allowedDomains !== undefined ? { allowed_domains: toJson([...new Set(input.allowedDomains)]) } : {}),
          ...(input.defaultRole !== undefined ? { default_role: input.defaultRole } : {}),
          ...(input.membershipScope !== undefined ? { membership_scope: input.membershipScope } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          updated_at: sql`now()`,
        })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow(),
      input.name,
    );
    forgetOidcConfig(id);
    const before = toSsoProvider(beforeRow, tx.config.TERN_PUBLIC_URL);
    const after = toSsoProvider(row, tx.config.TERN_PUBLIC_URL);
    await recordAudit(tx, {
      action: "update",
      resource: "sso",
      resourceId: id,
      before,
      after: { ...after, ...(input.clientSecret !== undefined ? { clientSecretChanged: true } : {}) },
    });
    return after;
  });
}

export async function deleteSsoProvider(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await loadProvider(tx, id, true);
    assertScopeAllowed(tx, row.membership_scope);
    await tx.db.deleteFrom("sso_providers").where("id", "=", id).execute();
    forgetOidcConfig(id);
    await recordAudit(tx, {
      action: "delete",
      resource: "sso",
      resourceId: id,
      before: toSsoProvider(row, tx.config.TERN_PUBLIC_URL),
    });
  });
}
