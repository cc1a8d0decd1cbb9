/**
 * A user's own TOTP factor: enrol (a new secret, shown once), confirm with a
 * first valid code (then it is active and recovery codes are shown once),
 * disable and regenerate recovery codes (each needs the password, when the
 * account has one, and a current code or a recovery code). Every change is
 * audited.
 */
import type { MfaStatus } from "@tern/protocol";
import { verifyPassword } from "../../auth/password.ts";
import { conflict } from "../../http/errors.ts";
import { type AuditedUser, auditUserEvent } from "./audit.ts";
import { recoveryCodesLeft, replaceRecoveryCodes } from "./recovery-codes.ts";
import { errorFor, type MfaDeps, type Outcome, type Proof, proveSecondFactor, secretAad } from "./second-factor.ts";
import { newTotpSecret, otpauthUrl, TOTP_DIGITS, TOTP_PERIOD } from "./totp.ts";

/** Users created by single sign-on have no password; their hash field holds this marker. */
export const NO_PASSWORD = "!no-password";

async function passwordCheck(deps: MfaDeps, userId: string, password: string | undefined): Promise<boolean | undefined> {
  const user = await deps.db.selectFrom("users").select("password_hash").where("id", "=", userId).executeTakeFirstOrThrow();
  if (!user.password_hash.startsWith("scrypt$")) return undefined; // no password to ask for
  return password !== undefined && (await verifyPassword(password, user.password_hash));
}

export async function getMfaStatus(deps: MfaDeps, user: AuditedUser): Promise<MfaStatus> {
  const row = await deps.db.selectFrom("user_mfa").select("enabled_at").where("user_id", "=", user.id).executeTakeFirst();
  const enabled = row?.enabled_at != null;
  return {
    enabled,
    pending: row !== undefined && !enabled,
    enabledAt: row?.enabled_at?.toISOString() ?? null,
    recoveryCodesLeft: enabled ? await recoveryCodesLeft(deps.db, user.id) : 0,
  };
}

/** Starts (or restarts) an enrolment: the secret is returned here once and stored encrypted. */
export async function enrolMfa(deps: MfaDeps, user: AuditedUser, input: { password?: string | undefined }) {
  const passwordOk = await passwordCheck(deps, user.id, input.password);
  const secret = newTotpSecret();
  const outcome = await deps.db.transaction().execute(async (tx): Promise<Outcome | { kind: "enrolled" }> => {
    const row = await tx.selectFrom("user_mfa").selectAll().where("user_id", "=", user.id).forUpdate().executeTakeFirst();
    if (row?.enabled_at) throw conflict("two-factor sign-in is already enabled: disable it first to enrol a new app");
    const values = { secret_enc: deps.keyring.encrypt(secret, secretAad(user.id)), last_time_step: null };
    // The pending row exists before the password is checked, so wrong passwords are counted (and backed off)
    // on it like wrong codes: a stolen session cannot guess the password here without limit.
    if (!row)
      await tx
        .insertInto("user_mfa")
        .values({ user_id: user.id, ...values })
        .execute();
    if (passwordOk === false) return proveSecondFactor(deps, tx, user, {}, { pending: true, passwordOk: false });
    const blocked = row?.blocked_until && row.blocked_until.getTime() > Date.now();
    if (blocked) return proveSecondFactor(deps, tx, user, {}, { pending: true });
    if (row) await tx.updateTable("user_mfa").set(values).where("user_id", "=", user.id).execute();
    await auditUserEvent(deps, tx, user, "mfa-enrol");
    return { kind: "enrolled" };
  });
  if (outcome.kind !== "enrolled") throw errorFor(outcome as Exclude<Outcome, { kind: "ok" }>);
  return {
    secret,
    otpauthUrl: otpauthUrl(secret, user.email),
    algorithm: "SHA1" as const,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
  };
}

/** Activates a pending enrolment with a valid code; answers the recovery codes (shown once). */
export async function confirmMfa(deps: MfaDeps, user: AuditedUser, code: string): Promise<{ recoveryCodes: string[] }> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const outcome = await proveSecondFactor(deps, tx, user, { code }, { pending: true });
    if (outcome.kind !== "ok") return outcome;
    await tx.updateTable("user_mfa").set({ enabled_at: new Date() }).where("user_id", "=", user.id).execute();
    const recoveryCodes = await replaceRecoveryCodes(tx, user.id);
    await auditUserEvent(deps, tx, user, "mfa-enable");
    return { kind: "done" as const, recoveryCodes };
  });
  if (result.kind !== "done") throw errorFor(result);
  return { recoveryCodes: result.recoveryCodes };
}

type ProofInput = Proof & { password?: string | undefined };

/** Turns 2FA off: the password (when the account has one) and a current code or a recovery code. */
export async function disableMfa(deps: MfaDeps, user: AuditedUser, input: ProofInput): Promise<void> {
  const passwordOk = await passwordCheck(deps, user.id, input.password);
  const result = await deps.db.transaction().execute(async (tx) => {
    const outcome = await proveSecondFactor(deps, tx, user, input, { passwordOk: passwordOk ?? true });
    if (outcome.kind !== "ok") return outcome;
    await tx.deleteFrom("user_mfa").where("user_id", "=", user.id).execute();
    await tx.deleteFrom("mfa_recovery_codes").where("user_id", "=", user.id).execute();
    await tx.deleteFrom("mfa_challenges").where("user_id", "=", user.id).execute();
    await auditUserEvent(deps, tx, user, "mfa-disable", { provedWith: outcome.method });
    return { kind: "done" as const };
  });
  if (result.kind !== "done") throw errorFor(result);
}

/** New recovery codes (the old ones stop working): the password and a current code or a recovery code. */
export async function regenerateRecoveryCodes(
  deps: MfaDeps,
  user: AuditedUser,
  input: ProofInput,
): Promise<{ recoveryCodes: string[] }> {
  const passwordOk = await passwordCheck(deps, user.id, input.password);
  const result = await deps.db.transaction().execute(async (tx) => {
    const outcome = await proveSecondFactor(deps, tx, user, input, { passwordOk: passwordOk ?? true });
    if (outcome.kind !== "ok") return outcome;
    const recoveryCodes = await replaceRecoveryCodes(tx, user.id);
    await auditUserEvent(deps, tx, user, "mfa-recovery-codes", { provedWith: outcome.method });
    return { kind: "done" as const, recoveryCodes };
  });
  if (result.kind !== "done") throw errorFor(result);
  return { recoveryCodes: result.recoveryCodes };
}
