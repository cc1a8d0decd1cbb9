/**
 * One interface per table, in the shape the database returns rows
 * (snake_case columns). Add a table here together with its migration.
 */
import type {
  Bgp,
  DeviceConfig,
  DeviceInterface,
  DhcpServer,
  EmailConf,
  Firewall,
  JobError,
  JobState,
  JobTask,
  JobType,
  NotificationRules,
  Permissions,
  PolicyRule,
  Role,
  Severity,
  StaticRoute,
  TunnelThresholds,
} from "@tern/protocol";
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

/** A jsonb column: read as T, written as JSON text (db/json.ts toJson). */
export type Json<T> = ColumnType<T, string, string>;
export type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

export interface RegistrationTokensTable {
  id: string;
  organization_id: string;
  name: string;
  token_hash: string;
  expires_at: NullableTimestamp;
  uses: Generated<number>;
  created_by: string;
  created_at: CreatedAt;
}

export interface PathLabelsTable {
  id: string;
  organization_id: string;
  name: string;
  description: Generated<string>;
  color: string;
  type: "DIA" | "Tunnel";
  created_at: CreatedAt;
}

export interface MlPoliciesTable {
  id: string;
  organization_id: string;
  name: string;
  description: Generated<string>;
  rules: Json<PolicyRule[]>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface DevicesTable {
  id: string;
  organization_id: string;
  name: string;
  description: Generated<string>;
  hostname: string;
  machine_id: string;
  is_approved: Generated<boolean>;
  device_token_hash: string;
  agent_version: Generated<string>;
  protocol_version: Generated<number>;
  interfaces: Json<DeviceInterface[]>;
  static_routes: Json<StaticRoute[]>;
  dhcp: Json<DhcpServer[]>;
  bgp: Json<Bgp>;
  firewall: Json<Firewall>;
  device_specific_rules_enabled: Generated<boolean>;
  mlpolicy_id: string | null;
  desired_config: NullableJson<DeviceConfig>;
  desired_hash: string | null;
  applied_hash: string | null;
  connection: Generated<"never" | "connected" | "disconnected">;
  last_connected_at: NullableTimestamp;
  last_seen_at: NullableTimestamp;
  sync_attempts: Generated<number>;
  auto_sync_paused: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface PeersTable {
  id: string;
  organization_id: string;
  name: string;
  /** The protocol PeerCreate fields without `psk`. */
  config: Json<Record<string, unknown>>;
  psk_enc: string;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface TunnelsTable {
  id: string;
  organization_id: string;
  num: number;
  device_a: string;
  interface_a: string;
  device_b: string | null;
  interface_b: string | null;
  peer_id: string | null;
  pathlabel_id: string | null;
  endpoint_key: string;
  description: Generated<string>;
  psk_enc: string | null;
  notifications: Json<TunnelThresholds>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface VrrpGroupsTable {
  id: string;
  organization_id: string;
  name: string;
  virtual_router_id: number;
  virtual_ip: string;
  preemption: boolean;
  accept_mode: boolean;
  advert_interval_ms: number;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface VrrpMembersTable {
  group_id: string;
  device_id: string;
  /** Order of the member in the group as the admin gave it. */
  position: number;
  interface: string;
  priority: number;
  track_optional: Json<string[]>;
  track_mandatory: Json<string[]>;
}

export interface JobsTable {
  id: string;
  organization_id: string;
  device_id: string;
  type: JobType;
  state: JobState;
  tasks: Json<JobTask[]>;
  target_hash: string;
  error: NullableJson<JobError>;
  corrected_at: NullableTimestamp;
  attempts: Generated<number>;
  created_by: string;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface NotificationsTable {
  id: string;
  organization_id: string;
  device_id: string | null;
  event_type: string;
  title: string;
  details: string;
  severity: Severity;
  targets: Json<{ deviceId: string | null; tunnelId: string | null; interfaceId: string | null; vrrpGroupId: string | null }>;
  dedup_key: string;
  count: Generated<number>;
  resolved: Generated<boolean>;
  is_read: Generated<boolean>;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  resolved_at: NullableTimestamp;
}

export interface NotificationSettingsTable {
  organization_id: string;
  rules: Json<NotificationRules>;
  email: Json<EmailConf>;
  webhook: Json<{ enabled: boolean; url: string; minSeverity: Severity }>;
  webhook_secret_enc: string | null;
  updated_at: CreatedAt;
}

export interface AccountNotificationDefaultsTable {
  account_id: string;
  rules: Json<NotificationRules>;
  email: Json<EmailConf>;
  updated_at: CreatedAt;
}

export interface PurchasedAppsTable {
  id: string;
  organization_id: string;
  app_id: string;
  state: Json<Record<string, unknown>>;
  last_action: NullableJson<{ name: string; at: string; result: string }>;
  purchased_at: CreatedAt;
}

export interface Database {
  accounts: AccountsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  audit_log: AuditLogTable;
  registration_tokens: RegistrationTokensTable;
  path_labels: PathLabelsTable;
  mlpolicies: MlPoliciesTable;
  devices: DevicesTable;
  peers: PeersTable;
  tunnels: TunnelsTable;
  vrrp_groups: VrrpGroupsTable;
  vrrp_members: VrrpMembersTable;
  jobs: JobsTable;
  notifications: NotificationsTable;
  notification_settings: NotificationSettingsTable;
  account_notification_defaults: AccountNotificationDefaultsTable;
  purchased_apps: PurchasedAppsTable;
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
export type DeviceRow = Selectable<DevicesTable>;
export type TunnelRow = Selectable<TunnelsTable>;
export type PeerRow = Selectable<PeersTable>;
export type JobRow = Selectable<JobsTable>;
export type VrrpGroupRow = Selectable<VrrpGroupsTable>;
export type VrrpMemberRow = Selectable<VrrpMembersTable>;
export type MlPolicyRow = Selectable<MlPoliciesTable>;
export type PathLabelRow = Selectable<PathLabelsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
