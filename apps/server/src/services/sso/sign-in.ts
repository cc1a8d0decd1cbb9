/**
 * Signing in through an identity provider: the start (PKCE, state, nonce,
 * kept server-side, plus a random browser binding the caller sets as an
 * HttpOnly cookie, so a callback only counts in the browser that started it)
 * and the callback (code exchange, ID token checks by openid-client,
 * `email_verified` required, the user matched by verified e-mail, a new member
 * created with the provider's default role when the address is in an allowed
 * domain). The session comes from finishSignIn, as after a password.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { LoginResult } from "@tern/protocol";
import * as client from "openid-client";
import { accessibleOrgsQuery } from "../../auth/resolve-access.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError, conflict, notFound } from "../../http/errors.ts";
import { auditUserEvent } from "../mfa/audit.ts";
import { NO_PASSWORD } from "../mfa/enrolment.ts";
import { type ClientInfo, finishSignIn } from "../sessions.ts";
import { oidcConfig, oidcError } from "./oidc.ts";
import { CALLBACK_PATH, clientSecretAad, type SsoProviderRow } from "./providers.ts";

/** How long a started sign-in may take at the provider. */
export const SSO_LOGIN_TTL_S = 600;
export const SSO_COOKIE = "tern_sso";

type SsoDeps = Pick<AppDeps, "db" | "config" | "keyring" | "logger" | "loginLimits">;

const failed = (message: string) => new ApiError("SSO_FAILED", message);
export const verifierAad = (loginId: string) => `sso-login:${loginId}`;

function publicUrl(deps: SsoDeps): string {
  const url = deps.config.TERN_PUBLIC_URL;
  if (!url) throw conflict("single sign-on needs the server's public URL: set TERN_PUBLIC_URL");
  return url;
}

function target(deps: SsoDeps, row: SsoProviderRow) {
  return {
    id: row.id,
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: deps.keyring.decrypt(row.client_secret_enc, clientSecretAad(row.id)),
    version: row.updated_at.toISOString(),
  };
}

/** The provider's authorization URL to redirect to, and the browser binding to set as a cookie. */
export async function startSsoLogin(deps: SsoDeps, providerId: string): Promise<{ url: string; binding: string }> {
  const base = publicUrl(deps);
  const row = await deps.db
    .selectFrom("sso_providers")
    .selectAll()
    .where("id", "=", providerId)
    .where("enabled", "=", true)
    .executeTakeFirst();
  if (!row) throw notFound("identity provider");
  const config = await oidcConfig(target(deps, row));

  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const binding = randomBytes(32).toString("base64url");
  const id = randomUUID();
  await deps.db
    .insertInto("sso_logins")
    .values({
      id,
      provider_id: row.id,
      state_hash: hashSecretToken(state),
      binding_hash: hashSecretToken(binding),
      code_verifier_enc: deps.keyring.encrypt(verifier, verifierAad(id)),
      nonce,
      expires_at: new Date(Date.now() + SSO_LOGIN_TTL_S * 1000),
    })
    .execute();
  await deps.db.deleteFrom("sso_logins").where("expires_at", "<", new Date()).execute();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${base}${CALLBACK_PATH}`,
    scope: "openid email profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { url: url.href, binding };
}

/** Takes the pending sign-in of `state` (single use, even when what follows fails). */
async function takeLogin(deps: SsoDeps, state: string | undefined, binding: string | undefined) {
  if (!state) throw failed("the callback has no state");
  const login = await deps.db
    .updateTable("sso_logins")
    .set({ used_at: new Date() })
    .where("state_hash", "=", hashSecretToken(state))
    .where("used_at", "is", null)
    .returningAll()
    .executeTakeFirst();
  if (!login || login.expires_at.getTime() <= Date.now()) throw failed("unknown, used or expired sign-in: start again");
  if (!binding || hashSecretToken(binding) !== login.binding_hash) {
    throw failed("this sign-in was started in another browser: start again");
  }
  return login;
}

interface VerifiedIdentity {
  email: string;
  name: string;
}

function isTrue(v: unknown) {
  return v === true || v === "true";
}

/** Finds the user of a verified address: exact, else the one user whose address matches ignoring case. */
async function findUser(db: Db, email: string) {
  const exact = await db.selectFrom("users").select(["id", "email"]).where("email", "=", email).executeTakeFirst();
  if (exact) return exact;
  const folded = await db
    .selectFrom("users")
    .select(["id", "email"])
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .limit(2)
    .execute();
  return folded.length === 1 ? folded[0] : undefined;
}

/** The callback: `query` is the provider's redirect as received (`search` with the leading '?'). */
export async function completeSsoLogin(
  deps: SsoDeps,
  input: { search: string; state?: string | undefined; error?: string | undefined; binding?: string | undefined },
  clientInfo: ClientInfo,
): Promise<LoginResult> {
  const base = publicUrl(deps);
  const login = await takeLogin(deps, input.state, input.binding);
  if (input.error) throw failed(`the identity provider refused the sign-in (${input.error.slice(0, 100)})`);
  const row = await deps.db
    .selectFrom("sso_providers")
    .selectAll()
    .where("id", "=", login.provider_id)
    .where("enabled", "=", true)
    .executeTakeFirst();
  if (!row) throw notFound("identity provider");

  const identity = await exchange(deps, row, login, `${base}${CALLBACK_PATH}${input.search}`, input.state!);
  const userId = await matchOrJoin(deps, row, identity);
  return finishSignIn(deps, userId, clientInfo);
}

async function exchange(
  deps: SsoDeps,
  row: SsoProviderRow,
  login: { id: string; code_verifier_enc: string; nonce: string },
  currentUrl: string,
  state: string,
): Promise<VerifiedIdentity> {
  const config = await oidcConfig(target(deps, row));
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(currentUrl), {
      pkceCodeVerifier: deps.keyring.decrypt(login.code_verifier_enc, verifierAad(login.id)),
      expectedState: state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw failed("the identity provider sent no ID token");
    let profile: Record<string, unknown> = claims;
    // Providers that follow the spec to the letter put e-mail claims only in the userinfo answer.
    if (typeof claims.email !== "string") {
      profile = { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims };
    }
    const email = typeof profile.email === "string" ? profile.email.trim() : "";
    if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw failed("the identity provider sent no e-mail address");
    if (!isTrue(profile.email_verified)) {
      throw new ApiError("SSO_EMAIL_NOT_VERIFIED", "the identity provider has not verified this e-mail address");
    }
    const name = typeof profile.name === "string" ? profile.name.slice(0, 100) : "";
    return { email, name };
  } catch (err) {
    deps.logger.info({ err, provider: row.id }, "single sign-on failed");
    throw oidcError(err);
  }
}

const notAllowed = () =>
  new ApiError(
    "SSO_NOT_ALLOWED",
    "no member has this e-mail address and its domain is not allowed to join through this provider",
  );

const beyondAuthority = () =>
  new ApiError(
    "SSO_NOT_ALLOWED",
    "this user is also a member beyond what this identity provider governs: sign in with the password instead",
  );

/**
 * An identity provider is configured by an owner of one organization (or of
 * one account), so it may only vouch for users who belong nowhere else: a
 * provider that could assert any address would otherwise hand its owner the
 * sessions of users of other organizations or tenants.
 */
async function hasMembershipBeyond(db: Db, userId: string, provider: SsoProviderRow, accountId: string): Promise<boolean> {
  const outside = await db
    .selectFrom("memberships as m")
    .leftJoin("organizations as o", "o.id", "m.organization_id")
    .select("m.id")
    .where("m.user_id", "=", userId)
    .where((eb) =>
      provider.membership_scope === "account"
        ? eb.and([
            eb.or([eb("m.account_id", "is", null), eb("m.account_id", "!=", accountId)]),
            eb.or([eb("o.account_id", "is", null), eb("o.account_id", "!=", accountId)]),
          ])
        : eb.or([eb("m.organization_id", "is", null), eb("m.organization_id", "!=", provider.organization_id)]),
    )
    .limit(1)
    .executeTakeFirst();
  return outside !== undefined;
}

/** The user of the verified address, made a member (with the default role) when new and in an allowed domain. */
async function matchOrJoin(deps: SsoDeps, provider: SsoProviderRow, identity: VerifiedIdentity): Promise<string> {
  const domain = identity.email.split("@").pop()!.toLowerCase();
  const mayJoin = provider.allowed_domains.includes(domain);
  return deps.db.transaction().execute(async (tx) => {
    const org = await tx
      .selectFrom("organizations")
      .select(["id", "account_id", "name"])
      .where("id", "=", provider.organization_id)
      .executeTakeFirstOrThrow();
    let user = await findUser(tx, identity.email);
    if (user) {
      if (await hasMembershipBeyond(tx, user.id, provider, org.account_id)) throw beyondAuthority();
      const member = await accessibleOrgsQuery(tx, user.id).select("o.id").where("o.id", "=", org.id).executeTakeFirst();
      if (member) {
        await auditUserEvent(deps, tx, user, "sso-login", { provider: provider.id });
        return user.id;
      }
      if (!mayJoin) throw notAllowed();
    } else {
      if (!mayJoin) throw notAllowed();
      user = { id: randomUUID(), email: identity.email };
      await tx
        .insertInto("users")
        .values({ id: user.id, email: identity.email, name: identity.name, password_hash: NO_PASSWORD, default_org_id: org.id })
        .execute();
    }
    const scope = provider.membership_scope;
    await tx
      .insertInto("memberships")
      .values({
        id: randomUUID(),
        user_id: user.id,
        account_id: scope === "account" ? org.account_id : null,
        organization_id: scope === "organization" ? org.id : null,
        role: provider.default_role,
      })
      .execute();
    await auditUserEvent(deps, tx, user, "sso-join", { provider: provider.id, role: provider.default_role, scope });
    return user.id;
  });
}
