/** Two-factor sign-in with TOTP (RFC 6238) and recovery codes. */
import * as z from "zod";
import { Timestamp } from "./common.ts";
import { TokenPair } from "./tenancy.ts";

/** A 6-digit TOTP code (spaces allowed, as authenticator apps show "123 456"). */
export const TotpCode = z
  .string()
  .transform((s) => s.replace(/\s+/g, ""))
  .pipe(z.string().regex(/^\d{6}$/, "must be the 6-digit code of the authenticator app"));

/** A recovery code as shown at enrolment (`xxxx-xxxx-xxxx-xxxx`, letter case and dashes ignored). */
export const RecoveryCode = z
  .string()
  .max(40)
  .transform((s) => s.replace(/[\s-]+/g, "").toUpperCase())
  .pipe(z.string().regex(/^[A-Z2-7]{16}$/, "must be a recovery code like abcd-efgh-ijkl-mnop"));

/** Proof of the second factor: a current TOTP code or one unused recovery code (exactly one of them). */
export const SecondFactor = z
  .strictObject({ code: TotpCode.optional(), recoveryCode: RecoveryCode.optional() })
  .refine((v) => (v.code === undefined) !== (v.recoveryCode === undefined), {
    message: "give exactly one of code and recoveryCode",
  });

/** What the password step (or an SSO callback) answers when the user has 2FA: no tokens yet. */
export const MfaChallenge = z.strictObject({
  mfaRequired: z.literal(true),
  /** Single-use; send it with a code to POST /users/login/mfa before it expires. */
  challenge: z.string(),
  expiresIn: z.number().int(),
  methods: z.array(z.enum(["totp", "recovery"])),
});
export type MfaChallenge = z.infer<typeof MfaChallenge>;

/** Answer of the password step: tokens, or a second-factor challenge. */
export const LoginResult = z.union([TokenPair, MfaChallenge]);
export type LoginResult = z.infer<typeof LoginResult>;

/** `POST /users/login/mfa`. */
export const MfaLoginRequest = z
  .strictObject({
    challenge: z.string().min(1).max(200),
    code: TotpCode.optional(),
    recoveryCode: RecoveryCode.optional(),
  })
  .refine((v) => (v.code === undefined) !== (v.recoveryCode === undefined), {
    message: "give exactly one of code and recoveryCode",
  });

export const MfaStatus = z.strictObject({
  enabled: z.boolean(),
  /** An enrolment waits for its first code. */
  pending: z.boolean(),
  enabledAt: Timestamp.nullable(),
  recoveryCodesLeft: z.number().int().min(0),
});
export type MfaStatus = z.infer<typeof MfaStatus>;

/** `POST /users/me/mfa/enrol`: the password, when the account has one. */
export const MfaEnrolRequest = z.strictObject({ password: z.string().min(1).max(200).optional() });

/** The new secret, shown once: enter it (or scan the otpauth:// URI as a QR code) in an authenticator app. */
export const MfaEnrolment = z.strictObject({
  secret: z.string(),
  otpauthUrl: z.string(),
  algorithm: z.literal("SHA1"),
  digits: z.literal(6),
  period: z.literal(30),
});

export const MfaConfirmRequest = z.strictObject({ code: TotpCode });

/** Recovery codes, shown once: each opens one sign-in without the app. */
export const MfaRecoveryCodes = z.strictObject({ recoveryCodes: z.array(z.string()) });

/** `POST /users/me/mfa/disable` and `/recovery-codes`: the password (when the account has one) and a second factor. */
export const MfaProofRequest = z
  .strictObject({
    password: z.string().min(1).max(200).optional(),
    code: TotpCode.optional(),
    recoveryCode: RecoveryCode.optional(),
  })
  .refine((v) => (v.code === undefined) !== (v.recoveryCode === undefined), {
    message: "give exactly one of code and recoveryCode",
  });

/** An organization's sign-in policy. */
export const OrganizationSecurity = z.strictObject({
  /** Members without two-factor sign-in get 403 MFA_REQUIRED in this organization until they enrol. */
  requireMfa: z.boolean(),
});
export type OrganizationSecurity = z.infer<typeof OrganizationSecurity>;
