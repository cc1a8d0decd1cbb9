/** Accounts, organizations, users, memberships, access tokens and registration tokens. */
import * as z from "zod";
import { Description, Id, Name, Network, Timestamp } from "./common.ts";
import { parseCidr } from "./ip.ts";

export const Role = z.enum(["owner", "manager", "viewer"]);
export type Role = z.infer<typeof Role>;

/** Resources that carry a permission mask. */
export const PERMISSION_RESOURCES = [
  "devices",
  "tunnels",
  "peers",
  "jobs",
  "notifications",
  "notificationsConf",
  "mlpolicies",
  "pathlabels",
  "vrrp",
  "organizations",
  "accounts",
  "accesstokens",
  "tokens",
  "members",
  "applications",
  "audit",
] as const;
export const PermissionResource = z.enum(PERMISSION_RESOURCES);
export type PermissionResource = z.infer<typeof PermissionResource>;

/** Permission bits of a mask. */
export const PERM = { get: 1, post: 2, put: 4, del: 8 } as const;
export type PermissionBit = keyof typeof PERM;
export const ALL = 15;

export const PermissionMask = z.number().int().min(0).max(15);
export const Permissions = z.record(PermissionResource, PermissionMask);
export type Permissions = z.infer<typeof Permissions>;

const every = (mask: number, except: Partial<Record<PermissionResource, number>> = {}): Permissions =>
  Object.fromEntries(PERMISSION_RESOURCES.map((r) => [r, except[r] ?? mask])) as Permissions;

/** What each role may do, resource by resource. */
export const ROLE_PERMISSIONS: Record<Role, Permissions> = {
  owner: every(ALL),
  manager: every(ALL, { accounts: PERM.get, organizations: PERM.get | PERM.put, members: PERM.get }),
  viewer: every(PERM.get, { accesstokens: 0, members: PERM.get, audit: 0 }),
};

/** Tunnel ranges must be a real network of at least a /24 (room for 127 tunnels). */
export const TunnelRange = Network.refine((s) => (parseCidr(s)?.prefix ?? 33) <= 24, {
  message: "tunnelRange must be a network of /24 or larger",
});
export const DEFAULT_TUNNEL_RANGE = "10.100.0.0/16";

export const OrganizationCreate = z.object({
  name: Name,
  description: Description,
  group: z.string().max(100).default("Default"),
  tunnelRange: TunnelRange.default(DEFAULT_TUNNEL_RANGE),
});
/**
 * The fields a PUT changes; each is optional and has no default, so a PUT of
 * one field leaves the others as they are (a `.partial()` of the create schema
 * would fill in its defaults and reset the description, group and tunnel range).
 */
export const OrganizationUpdate = z.object({
  name: Name.optional(),
  description: Description.unwrap().optional(),
  group: z.string().max(100).optional(),
  tunnelRange: TunnelRange.optional(),
});
export const Organization = z.object({
  id: Id,
  account: Id,
  name: z.string(),
  description: z.string(),
  group: z.string(),
  /** The tunnel loopback range (6.3.1), modifiable. */
  tunnelRange: z.string(),
  createdAt: Timestamp,
});
export type Organization = z.infer<typeof Organization>;

export const Account = z.object({
  id: Id,
  name: z.string(),
  country: z.string(),
  companyType: z.string(),
  /** When the account's trial ends. */
  trial_end: Timestamp.nullable(),
  /** `trial` for self-service sign-ups; null: no plan (self-hosting). Added 2026-11-25: older payloads read as null. */
  plan: z.string().nullable().default(null),
  /** What the plan allows (null = unlimited): devices (approved or waiting) and organizations of the account. */
  limits: z
    .object({ devices: z.number().int().nullable(), organizations: z.number().int().nullable() })
    .default({ devices: null, organizations: null }),
  createdAt: Timestamp,
});
export type Account = z.infer<typeof Account>;
export const AccountUpdate = z.object({
  name: Name.optional(),
  country: z.string().max(2).optional(),
  companyType: z.string().max(100).optional(),
});

/** Usernames are e-mail addresses compared case-sensitively (as the spec requires). */
export const Email = z
  .string()
  .trim()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, "must be an e-mail address");

export const Password = z.string().min(10, "password must be at least 10 characters").max(200);
export const LoginRequest = z.object({ username: Email, password: z.string().min(1).max(200) });
export const TokenPair = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal("Bearer"),
  expiresIn: z.number().int(),
});
export type TokenPair = z.infer<typeof TokenPair>;
export const RefreshRequest = z.object({ refreshToken: z.string().min(1).max(500) });

export const User = z.object({ id: Id, email: z.string(), name: z.string(), createdAt: Timestamp });
export type User = z.infer<typeof User>;

export const MembershipScope = z.enum(["account", "organization"]);
export const Membership = z.object({
  id: Id,
  user: User.pick({ id: true, email: true, name: true }),
  scope: MembershipScope,
  /** The account or organization id. */
  scopeId: Id,
  role: Role,
  createdAt: Timestamp,
});
export type Membership = z.infer<typeof Membership>;
export const MembershipUpdate = z.object({ role: Role });

export const AccessTokenCreate = z.object({
  name: Name,
  role: Role.default("viewer"),
  /** Per-resource masks; resources not named get the role's default. */
  permissions: z.partialRecord(PermissionResource, PermissionMask).default({}),
});
export type AccessTokenCreate = z.infer<typeof AccessTokenCreate>;
export const AccessToken = z.object({
  id: Id,
  org: Id,
  name: z.string(),
  role: Role,
  permissions: Permissions,
  creator: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});
export type AccessToken = z.infer<typeof AccessToken>;
/** Creation answer: the only time the secret is shown. */
export const AccessTokenCreated = AccessToken.extend({ token: z.string() });

export const RegistrationTokenCreate = z.strictObject({
  name: Name,
  /** Expiry; omitted = the server's default lifetime (TERN_REGISTRATION_TOKEN_TTL), null = until deleted. */
  expiresAt: Timestamp.nullable().optional(),
  /** Registrations the token allows; omitted or null = no limit. */
  maxUses: z.number().int().positive().max(1_000_000).nullable().optional(),
});
export const RegistrationToken = z.object({
  id: Id,
  org: Id,
  name: z.string(),
  expiresAt: Timestamp.nullable(),
  uses: z.number().int().min(0),
  /** Registrations allowed; null = no limit. */
  maxUses: z.number().int().positive().nullable(),
  createdAt: Timestamp,
});
export type RegistrationToken = z.infer<typeof RegistrationToken>;
export const RegistrationTokenCreated = RegistrationToken.extend({ token: z.string() });

export const AuditEntry = z.object({
  id: Id,
  org: Id.nullable(),
  actor: z.string(),
  action: z.string(),
  resource: z.string(),
  resourceId: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
  at: Timestamp,
});
export type AuditEntry = z.infer<typeof AuditEntry>;
