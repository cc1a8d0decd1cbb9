/**
 * One interface per table, in the shape the database returns rows
 * (snake_case columns). Add a table here together with its migration.
 */
import type { Permissions, Role } from "@tern/protocol";
import type { ColumnType, Generated, Insertable, JSONColumnType, Kysely, Selectable, Transaction, Updateable } from "kysely";

/** timestamptz: read as Date, written as Date or ISO text, defaulted by the database. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface AccountsTable {
  id: string;
  name: string;
  country: Generated<string>;
  company_type: Generated<string>;
  trial_end: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface OrganizationsTable {
  id: string;
  account_id: string;
  name: string;
  description: Generated<string>;
  group_name: Generated<string>;
  tunnel_range: string;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: Generated<string>;
  password_hash: string;
  default_org_id: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface MembershipsTable {
  id: string;
  user_id: string;
  account_id: string | null;
  organization_id: string | null;
  role: Role;
  created_at: CreatedAt;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  refresh_hash: string;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  ip: Generated<string>;
  user_agent: Generated<string>;
  created_at: CreatedAt;
  last_used_at: CreatedAt;
}

export interface AccessTokensTable {
  id: string;
  organization_id: string;
  name: string;
  role: Role;
  permissions: JSONColumnType<Permissions, string, string>;
  token_hash: string;
  creator: string;
  creator_user_id: string;
  parent_token_id: string | null;
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
}

export interface AuditLogTable {
  id: string;
  account_id: string | null;
  organization_id: string | null;
  actor: string;
  actor_user_id: string | null;
  actor_token_id: string | null;
  action: string;
  resource: string;
  resource_id: string | null;
  /** jsonb, written as JSON text (db/json.ts). */
  before: ColumnType<unknown, string | null, string | null>;
  after: ColumnType<unknown, string | null, string | null>;
  at: CreatedAt;
}

export interface Database {
  accounts: AccountsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  audit_log: AuditLogTable;
}

/** The database handle services take: the root Kysely or a transaction of it. */
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

export type AccountRow = Selectable<AccountsTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
export type OrganizationChange = Updateable<OrganizationsTable>;
export type UserRow = Selectable<UsersTable>;
export type MembershipRow = Selectable<MembershipsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type AccessTokenRow = Selectable<AccessTokensTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
