/** Account security: own password, password reset, invitations of members, login sessions. */
import * as z from "zod";
import { Id, Name, Timestamp } from "./common.ts";
import { Account, Email, MembershipScope, Password, Role } from "./tenancy.ts";

/** `POST /users/password`: change the caller's own password; the current one is required. */
export const PasswordChange = z.strictObject({
  currentPassword: z.string().min(1).max(200),
  newPassword: Password,
});
export type PasswordChange = z.infer<typeof PasswordChange>;

/** `POST /users/password-reset`: ask for a reset e-mail; the answer is the same whether or not the address exists. */
export const PasswordResetRequest = z.strictObject({ email: Email });

/** `POST /users/password-reset/confirm`: the token from the e-mail and the new password. */
export const PasswordResetConfirm = z.strictObject({
  token: z.string().min(1).max(200),
  newPassword: Password,
});

/** `POST /accounts/signup`: self-service sign-up (SaaS option); the answer is the same whether or not the address has a user. */
export const SignupRequest = z.strictObject({
  email: Email,
  password: Password,
  /** The person's name. */
  name: Name,
  /** The name of the account and of its first organization. */
  organizationName: Name,
});
export type SignupRequest = z.infer<typeof SignupRequest>;

/** `POST /accounts/signup/verify`: the token from the verification e-mail. */
export const SignupVerify = z.strictObject({ token: z.string().min(1).max(200) });

/** What verifying a sign-up created; sign in with the e-mail and password given at sign-up. */
export const SignupResult = z.object({
  account: Account,
  organizationId: Id,
  userId: Id,
  email: z.string(),
});
export type SignupResult = z.infer<typeof SignupResult>;

/** `POST /invitations`: invite an e-mail address to the organization (or, for account owners, its account). */
export const InvitationCreate = z.strictObject({
  email: Email,
  role: Role,
  scope: MembershipScope.default("organization"),
});

/** A pending invitation; its token only ever travels in the e-mail to the invited address. */
export const Invitation = z.object({
  id: Id,
  email: z.string(),
  role: Role,
  scope: MembershipScope,
  /** The account or organization id. */
  scopeId: Id,
  invitedBy: z.string(),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});
export type Invitation = z.infer<typeof Invitation>;

/**
 * `POST /invitations/accept`. Signed in (bearer token of the invited address):
 * only `token`. Not signed in: `password` (and optionally `name`) create the
 * user; refused with SIGN_IN_REQUIRED when the address already has a user.
 */
export const InvitationAccept = z.strictObject({
  token: z.string().min(1).max(200),
  name: z.string().max(100).optional(),
  password: Password.optional(),
});

/** A login session of a user (one refresh token and the access JWTs issued for it). */
export const Session = z.object({
  id: Id,
  ip: z.string(),
  userAgent: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp,
  expiresAt: Timestamp,
  /** True for the session of the request's own access token. */
  current: z.boolean(),
});
export type Session = z.infer<typeof Session>;
