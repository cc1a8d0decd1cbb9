/** Single sign-on with OpenID Connect identity providers. */
import * as z from "zod";
import { Id, Name, Timestamp } from "./common.ts";

/** An e-mail domain (lower case, no @). */
export const EmailDomain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be an e-mail domain like example.com");

/** The issuer URL (https; http only where the server allows it, for a provider on loopback). */
export const IssuerUrl = z.url({ protocol: /^https?$/ }).max(500);

/** Role of a user who joins through the provider: never owner. */
export const SsoDefaultRole = z.enum(["manager", "viewer"]);

export const SsoProviderCreate = z.strictObject({
  name: Name,
  issuer: IssuerUrl,
  clientId: z.string().min(1).max(300),
  clientSecret: z.string().min(1).max(500),
  /** New users whose verified e-mail is in one of these domains become members; [] = only existing members sign in. */
  allowedDomains: z.array(EmailDomain).max(50).default([]),
  defaultRole: SsoDefaultRole.default("viewer"),
  /** Where new users join: this organization, or its whole account (account owners only). */
  membershipScope: z.enum(["organization", "account"]).default("organization"),
  enabled: z.boolean().default(true),
});

export const SsoProviderUpdate = z.strictObject({
  name: Name.optional(),
  issuer: IssuerUrl.optional(),
  clientId: z.string().min(1).max(300).optional(),
  clientSecret: z.string().min(1).max(500).optional(),
  allowedDomains: z.array(EmailDomain).max(50).optional(),
  defaultRole: SsoDefaultRole.optional(),
  membershipScope: z.enum(["organization", "account"]).optional(),
  enabled: z.boolean().optional(),
});

/** A provider as the API shows it: never its client secret. */
export const SsoProvider = z.strictObject({
  id: Id,
  org: Id,
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  allowedDomains: z.array(z.string()),
  defaultRole: SsoDefaultRole,
  membershipScope: z.enum(["organization", "account"]),
  enabled: z.boolean(),
  /** The redirect URI to register at the provider (null until TERN_PUBLIC_URL is set). */
  redirectUri: z.string().nullable(),
  /** Where a user starts signing in (null until TERN_PUBLIC_URL is set). */
  startUrl: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type SsoProvider = z.infer<typeof SsoProvider>;

/**
 * What the provider sends back to the callback. Not strict, unlike every other
 * input: the identity provider, not a Tern client, writes this query, and real
 * providers add parameters of their own (Google: scope, authuser, hd, prompt).
 * openid-client checks the authorization response itself.
 */
export const SsoCallbackQuery = z.looseObject({
  state: z.string().min(1).max(200).optional(),
  code: z.string().min(1).max(2000).optional(),
  iss: z.string().max(500).optional(),
  session_state: z.string().max(500).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
  error_uri: z.string().max(1000).optional(),
});
