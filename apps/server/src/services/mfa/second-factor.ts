/**
 * Checks a second factor (a TOTP code or a recovery code) inside the caller's
 * transaction, with the user's MFA row locked so two requests with the same
 * code cannot both pass. Wrong answers are counted on that row: after
 * MAX_FAILURES in a row the user's codes are refused for a back-off that
 * doubles with each further failure (capped), whoever sends them. The owner is
 * slowed down for minutes at worst, never locked out for good.
 *
 * Functions here return an outcome instead of throwing, so the failure count
 * is committed with the transaction; the caller throws errorFor(outcome) after.
 */

import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError, conflict } from "../../http/errors.ts";
import { type AuditedUser, auditUserEvent } from "./audit.ts";
import { useRecoveryCode } from "./recovery-codes.ts";
import { verifyTotp } from "./totp.ts";

export const MAX_FAILURES = 5;
const BACKOFF_BASE_S = 30;
const BACKOFF_MAX_S = 900;

export type MfaDeps = Pick<AppDeps, "db" | "keyring" | "config" | "logger">;

export interface Proof {
  code?: string | undefined;
  recoveryCode?: string | undefined;
}

export type Outcome =
  | { kind: "ok"; method: "totp" | "recovery" }
  | { kind: "not-enabled" }
  | { kind: "pending-missing" }
  | { kind: "blocked"; seconds: number }
  | { kind: "wrong-code" }
  | { kind: "wrong-password" };

/** The AAD that binds an encrypted TOTP secret to its user. */
export const secretAad = (userId: string) => `user-mfa:${userId}`;

export function errorFor(outcome: Exclude<Outcome, { kind: "ok" }>): ApiError {
  switch (outcome.kind) {
    case "not-enabled":
      return conflict("two-factor sign-in is not enabled");
    case "pending-missing":
      return conflict("no enrolment waits for confirmation: start one with POST /api/users/me/mfa/enrol");
    case "blocked":
      return new ApiError("RATE_LIMITED", `too many wrong codes; try again in ${outcome.seconds} s`, [], {
        "retry-after": String(outcome.seconds),
      });
    case "wrong-code":
      return new ApiError("MFA_PROOF_INVALID", "wrong, expired or already used code");
    case "wrong-password":
      return new ApiError("MFA_PROOF_INVALID", "the password or the code is wrong");
  }
}

/** The seconds a user must wait before sending codes again, or null. Locks nothing. */
function blockedSeconds(blockedUntil: Date | null, now: number): number | null {
  if (!blockedUntil || blockedUntil.getTime() <= now) return null;
  return Math.max(1, Math.ceil((blockedUntil.getTime() - now) / 1000));
}

/**
 * Checks `proof` against the user's factor. `pending`: check the code of an
 * enrolment not yet confirmed (TOTP only). `passwordOk`: false when the
 * caller checked a password and it was wrong (counted as a failure, before any code).
 */
export async function proveSecondFactor(
  deps: MfaDeps,
  tx: Db,
  user: AuditedUser,
  proof: Proof,
  options: { pending?: boolean; passwordOk?: boolean } = {},
): Promise<Outcome> {
  const now = Date.now();
  const row = await tx.selectFrom("user_mfa").selectAll().where("user_id", "=", user.id).forUpdate().executeTakeFirst();
  const enabled = row?.enabled_at != null;
  if (!row || (options.pending ? enabled : !enabled)) return { kind: options.pending ? "pending-missing" : "not-enabled" };
  const wait = blockedSeconds(row.blocked_until, now);
  if (wait !== null) return { kind: "blocked", seconds: wait };

  let method: "totp" | "recovery" | null = null;
  let timeStep: number | null = null;
  if (options.passwordOk !== false) {
    if (proof.code !== undefined) {
      const secret = deps.keyring.decrypt(row.secret_enc, secretAad(user.id));
      timeStep = await verifyTotp(secret, proof.code, row.last_time_step);
      if (timeStep !== null) method = "totp";
    } else if (proof.recoveryCode !== undefined && !options.pending) {
      if (await useRecoveryCode(tx, user.id, proof.recoveryCode)) method = "recovery";
    }
  }

  if (method) {
    await tx
      .updateTable("user_mfa")
      .set({ failed_attempts: 0, blocked_until: null, ...(timeStep !== null ? { last_time_step: timeStep } : {}) })
      .where("user_id", "=", user.id)
      .execute();
    if (method === "recovery") await auditUserEvent(deps, tx, user, "mfa-recovery-code-used");
    return { kind: "ok", method };
  }

  const failures = row.failed_attempts + 1;
  const backoff = failures >= MAX_FAILURES ? Math.min(BACKOFF_BASE_S * 2 ** (failures - MAX_FAILURES), BACKOFF_MAX_S) : null;
  await tx
    .updateTable("user_mfa")
    .set({ failed_attempts: failures, blocked_until: backoff ? new Date(now + backoff * 1000) : null })
    .where("user_id", "=", user.id)
    .execute();
  const reason = options.passwordOk === false ? "password" : proof.code !== undefined ? "code" : "recoveryCode";
  await auditUserEvent(deps, tx, user, "mfa-failed", { reason, failures, ...(backoff ? { blockedSeconds: backoff } : {}) });
  return options.passwordOk === false ? { kind: "wrong-password" } : { kind: "wrong-code" };
}
