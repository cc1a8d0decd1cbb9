/**
 * Self-service sign-up for the shared SaaS option (TERN_SIGNUP_ENABLED).
 *
 * Requesting answers 202 at once and the same way for every address: the
 * password hash, the token and the e-mail happen after the answer, so neither
 * content nor timing tells whether the address has a user. A new address gets
 * a verification e-mail with a single-use token (256 random bits, stored as
 * its hash, valid for TERN_SIGNUP_VERIFY_TTL); an address that already has a
 * user gets an e-mail saying so instead (its owner learns of the attempt,
 * the requester learns nothing). At most a few e-mails per address and
 * window, and every request counts against the per-client-address login limit.
 *
 * Verifying creates, in one transaction, the account (plan `trial`, its
 * limits from the configuration, `trial_end` TERN_TRIAL_DAYS ahead), its
 * first organization, the user, and the user's owner membership of the account.
 */
import { randomUUID } from "node:crypto";
import type { Account, SignupRequest } from "@tern/protocol";
import { DEFAULT_TUNNEL_RANGE } from "@tern/protocol";
import { sql } from "kysely";
import type { Actor } from "../../auth/access.ts";
import { hashPassword } from "../../auth/password.ts";
import { hashSecretToken, newSecretToken } from "../../auth/secret-tokens.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError } from "../../http/errors.ts";
import { toAccount } from "../accounts.ts";
import { recordAudit } from "../audit.ts";
import type { ClientInfo } from "../sessions.ts";
import { apiAddress, canSendMail, emailUnavailable, sendAccountMail } from "./account-mail.ts";
import { rateLimited } from "./password-change.ts";

/** Prefix of sign-up verification tokens. */
export const SIGNUP_TOKEN_PREFIX = "tern_sup_";
/** The plan signed-up accounts start on; its limits are TERN_TRIAL_MAX_*. */
export const TRIAL_PLAN = "trial";

type Deps = Pick<AppDeps, "db" | "config" | "loginLimits" | "logger">;

const disabled = () => new ApiError("SIGNUP_DISABLED", "self-service sign-up is turned off on this server");
const invalidToken = () => new ApiError("INVALID_TOKEN", "the sign-up token is unknown, used or expired; sign up again");

export interface SignedUp {
  account: Account;
  organizationId: string;
  userId: string;
  email: string;
}

/** Refuses when sign-up is off or mail cannot be sent, counts the request, and sends the e-mail after the answer. */
export function requestSignup(deps: Deps, input: SignupRequest, client: ClientInfo): void {
  if (!deps.config.TERN_SIGNUP_ENABLED) throw disabled();
  if (!canSendMail(deps.config)) throw emailUnavailable("TERN_SMTP_URL is not set");
  const { ip } = deps.loginLimits;
  const wait = ip.blockedFor(`ip:${client.ip}`);
  if (wait !== null) throw rateLimited(wait);
  ip.hit(`ip:${client.ip}`);
  setImmediate(() => {
    sendSignupMail(deps, input, client).catch((err) => deps.logger.warn({ err }, "sign-up e-mail not sent"));
  });
}

async function sendSignupMail(deps: Deps, input: SignupRequest, client: ClientInfo): Promise<void> {
  const key = `signup:${input.email}`;
  if (deps.loginLimits.signupMail.blockedFor(key) !== null) return;
  deps.loginLimits.signupMail.hit(key);
  const existing = await deps.db.selectFrom("users").select("id").where("email", "=", input.email).executeTakeFirst();
  if (existing) {
    await sendAccountMail(deps.config, input.email, {
      subject: "[Tern] Someone tried to sign up with your address",
      paragraphs: [
        `Someone (from address ${client.ip}) tried to create a new Tern account with ${input.email}, which already has a user. Nothing was created.`,
        `If it was you: sign in with this address instead. If you forgot your password, ask for a reset at ${apiAddress(deps.config, "/users/password-reset")}. If it was not you, ignore this e-mail.`,
      ],
    });
    return;
  }
  const token = newSecretToken(SIGNUP_TOKEN_PREFIX);
  const ttl = deps.config.TERN_SIGNUP_VERIFY_TTL;
  await deps.db
    .insertInto("account_signups")
    .values({
      id: randomUUID(),
      email: input.email,
      name: input.name,
      organization_name: input.organizationName,
      password_hash: await hashPassword(input.password, deps.config.TERN_PASSWORD_HASH_COST),
      token_hash: hashSecretToken(token),
      expires_at: new Date(Date.now() + ttl * 1000),
    })
    .execute();
  await sendAccountMail(deps.config, input.email, {
    subject: "[Tern] Verify your e-mail to create your account",
    paragraphs: [
      `Someone (from address ${client.ip}) signed up for a Tern account "${input.organizationName}" with ${input.email}. If it was not you, ignore this e-mail: nothing is created without it.`,
      `To create the account within ${Math.round(ttl / 3600)} hours, POST this token to ${apiAddress(deps.config, "/accounts/signup/verify")} as {"token": "…"}, then sign in with your e-mail and password. The token works once.`,
    ],
    code: token,
  });
}

/** Creates the account, organization, user and owner membership of a valid sign-up token. */
export async function verifySignup(deps: Deps, token: string, client: ClientInfo): Promise<SignedUp> {
  if (!deps.config.TERN_SIGNUP_ENABLED) throw disabled();
  if (!token.startsWith(SIGNUP_TOKEN_PREFIX)) throw invalidToken();
  const { config } = deps;
  return deps.db.transaction().execute(async (trx) => {
    const signup = await trx
      .updateTable("account_signups")
      .set({ used_at: sql`now()` })
      .where("token_hash", "=", hashSecretToken(token))
      .where("used_at", "is", null)
      .where("expires_at", ">", new Date())
      .returningAll()
      .executeTakeFirst();
    if (!signup) throw invalidToken();
    // The address got a user since (another sign-up verified first, an invitation accepted): the token is spent.
    const taken = await trx.selectFrom("users").select("id").where("email", "=", signup.email).executeTakeFirst();
    if (taken) throw invalidToken();
    // Other pending sign-ups of the address are void now.
    await trx
      .updateTable("account_signups")
      .set({ used_at: sql`now()` })
      .where("email", "=", signup.email)
      .where("used_at", "is", null)
      .execute();

    const accountId = randomUUID();
    const orgId = randomUUID();
    const userId = randomUUID();
    const account = await trx
      .insertInto("accounts")
      .values({
        id: accountId,
        name: signup.organization_name,
        trial_end: new Date(Date.now() + config.TERN_TRIAL_DAYS * 86_400_000),
        plan: TRIAL_PLAN,
        max_devices: config.TERN_TRIAL_MAX_DEVICES,
        max_organizations: config.TERN_TRIAL_MAX_ORGANIZATIONS,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .insertInto("organizations")
      .values({ id: orgId, account_id: accountId, name: signup.organization_name, tunnel_range: DEFAULT_TUNNEL_RANGE })
      .execute();
    await trx
      .insertInto("users")
      .values({ id: userId, email: signup.email, name: signup.name, password_hash: signup.password_hash, default_org_id: orgId })
      .execute();
    await trx
      .insertInto("memberships")
      .values({ id: randomUUID(), user_id: userId, account_id: accountId, organization_id: null, role: "owner" })
      .execute();
    const actor: Actor = { kind: "user", label: signup.email, userId, tokenId: null };
    await recordAudit(
      { db: trx, org: { id: orgId, accountId, name: signup.organization_name }, actor },
      {
        action: "signup",
        resource: "accounts",
        resourceId: accountId,
        after: { account: accountId, organization: orgId, owner: signup.email, plan: TRIAL_PLAN, ip: client.ip },
      },
    );
    return { account: toAccount(account), organizationId: orgId, userId, email: signup.email };
  });
}
