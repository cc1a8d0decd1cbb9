/**
 * The second step of signing in. A right password (or an SSO sign-in) of a
 * user with 2FA yields a challenge instead of tokens: 256 random bits, stored
 * hashed, valid CHALLENGE_TTL_S seconds, single-use, dead after
 * CHALLENGE_ATTEMPTS wrong codes. Stored in the database so any instance can
 * finish what another started.
 */
import { randomUUID } from "node:crypto";
import type { MfaChallenge } from "@tern/protocol";
import { hashSecretToken, newSecretToken } from "../../auth/secret-tokens.ts";
import { ApiError } from "../../http/errors.ts";
import { errorFor, type MfaDeps, type Proof, proveSecondFactor } from "./second-factor.ts";

export const CHALLENGE_TTL_S = 300;
export const CHALLENGE_ATTEMPTS = 5;
const CHALLENGE_PREFIX = "tern_mc_";

/** A challenge when the user has 2FA enabled, else null (the caller issues the session at once). */
export async function startSecondFactor(deps: Pick<MfaDeps, "db">, userId: string): Promise<MfaChallenge | null> {
  const mfa = await deps.db.selectFrom("user_mfa").select("enabled_at").where("user_id", "=", userId).executeTakeFirst();
  if (!mfa?.enabled_at) return null;
  const challenge = newSecretToken(CHALLENGE_PREFIX);
  await deps.db
    .insertInto("mfa_challenges")
    .values({
      id: randomUUID(),
      user_id: userId,
      token_hash: hashSecretToken(challenge),
      expires_at: new Date(Date.now() + CHALLENGE_TTL_S * 1000),
    })
    .execute();
  // Old challenges of the user are of no use any more; keep the table small.
  await deps.db
    .deleteFrom("mfa_challenges")
    .where("user_id", "=", userId)
    .where((eb) => eb.or([eb("expires_at", "<", new Date()), eb("used_at", "is not", null)]))
    .execute();
  return { mfaRequired: true, challenge, expiresIn: CHALLENGE_TTL_S, methods: ["totp", "recovery"] };
}

const badChallenge = () => new ApiError("UNAUTHENTICATED", "invalid, expired or used sign-in challenge: log in again");

/** Checks the code against the challenge's user and uses the challenge up; answers that user's id. */
export async function completeSecondFactor(deps: MfaDeps, input: Proof & { challenge: string }): Promise<string> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom("mfa_challenges as c")
      .innerJoin("users as u", "u.id", "c.user_id")
      .select(["c.id", "c.user_id", "c.expires_at", "c.attempts", "c.used_at", "u.email"])
      .where("c.token_hash", "=", hashSecretToken(input.challenge))
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.used_at || row.expires_at.getTime() <= Date.now() || row.attempts >= CHALLENGE_ATTEMPTS) {
      return { kind: "bad-challenge" as const };
    }
    const outcome = await proveSecondFactor(deps, tx, { id: row.user_id, email: row.email }, input);
    if (outcome.kind === "ok") {
      await tx.updateTable("mfa_challenges").set({ used_at: new Date() }).where("id", "=", row.id).execute();
      return { kind: "done" as const, userId: row.user_id };
    }
    if (outcome.kind === "wrong-code") {
      await tx
        .updateTable("mfa_challenges")
        .set({ attempts: row.attempts + 1 })
        .where("id", "=", row.id)
        .execute();
    }
    return outcome;
  });
  if (result.kind === "done") return result.userId;
  if (result.kind === "bad-challenge") throw badChallenge();
  // 2FA was turned off between the two steps: the challenge is no good either.
  if (result.kind === "not-enabled") throw badChallenge();
  throw errorFor(result);
}
