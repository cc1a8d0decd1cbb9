/**
 * One interface per table, in the shape the database returns rows
 * (snake_case columns). Add a table here together with its migration.
 */
import type {
  Bgp,
  BgpState,
  DeviceInterface,
  DhcpServer,
  EmailConf,
  Firewall,
  HealingKind,
  HealingMode,
  Health,
  InterfaceState,
  JobError,
  JobState,
  JobTask,
  JobType,
  LiveEvent,
  NotificationRules,
  Permissions,
  PolicyRule,
  Role,
  Severity,
  StaticRoute,
  TunnelThresholds,
  VrrpRouterState,
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
  /** `trial` for self-service sign-ups; null = no plan (self-hosting), no limits (migration 20261125-963). */
  plan: ColumnType<string | null, string | null | undefined, string | null>;
  /** Devices (approved or waiting) and organizations the account may have; null = unlimited. */
  max_devices: ColumnType<number | null, number | null | undefined, number | null>;
  max_organizations: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** A self-service sign-up waiting for its e-mail to be verified (services/accounts/signup.ts). */
export interface AccountSignupsTable {
  id: string;
  email: string;
  name: string;
  organization_name: string;
  password_hash: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

/** A diagnostic dump requested from a device and uploaded by it (services/devices/dumps/). */
export interface DeviceDumpsTable {
  id: string;
  organization_id: string;
  device_id: string;
  status: "pending" | "complete" | "failed";
  file_name: string | null;
  size_bytes: number | null;
  sha256: string | null;
  content: Buffer | null;
  error: string | null;
  requested_by: string;
  created_at: CreatedAt;
  completed_at: NullableTimestamp;
}

export interface AgentSigningKeysTable {
  id: string;
  account_id: string;
  name: string;
  public_key: string;
  created_at: CreatedAt;
}

export interface AgentPackagesTable {
  id: string;
  account_id: string;
  version: string;
  size_bytes: number;
  sha256: string;
  signature: string;
  signing_key_id: string;
  content: Buffer;
  uploaded_by: string;
  created_at: CreatedAt;
}

export interface AgentRolloutsTable {
  id: string;
  organization_id: string;
  package_id: string;
  version: string;
  state: "running" | "paused" | "cancelled" | "complete";
  paused_reason: string | null;
  window_start: string | null;
  window_end: string | null;
  canary_percent: number;
  batch_size: number;
  health_timeout_sec: number;
  created_by: string;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface AgentRolloutDevicesTable {
  id: string;
  rollout_id: string;
  organization_id: string;
  device_id: string;
  device_name: string;
  canary: boolean;
  batch: number;
  state: "pending" | "sending" | "installing" | "upgraded" | "rolled-back" | "failed" | "skipped";
  from_version: string;
  detail: string | null;
  started_at: NullableTimestamp;
  deadline_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  /** The device's `upgrade` job, from the moment the scheduler started it (null while pending or skipped). */
  job_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OrganizationsTable {
  id: string;
  account_id: string;
  name: string;
  description: Generated<string>;
  group_name: Generated<string>;
  tunnel_range: string;
  /** Members must have two-factor sign-in to act in this organization (migration 20261125-301). */
  require_mfa: Generated<boolean>;
  /** `act`, `suggest` or `off` (migration 20261125-964, docs/healing.md). */
  healing_mode: Generated<HealingMode>;
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
  /** json (migration 20261206-101), written as JSON text (db/json.ts). */
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
  /** Registrations allowed; null = no limit. */
  max_uses: Generated<number | null>;
  created_by: string;
  created_at: CreatedAt;
}

/** A password-reset token (hash only), single use, short-lived. */
export interface PasswordResetsTable {
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

/** An invitation of an e-mail address to an organization (or, organization_id null, its account). */
export interface InvitationsTable {
  id: string;
  account_id: string;
  organization_id: string | null;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  accepted_user_id: string | null;
  revoked_at: NullableTimestamp;
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
  /** The device's Ed25519 public key (base64url, 32 bytes); null before it proved one (legacy rows, after a reset). */
  public_key: Generated<string | null>;
  /** The time signed by the device's last accepted registration: the next one must be newer (no replay). */
  identity_proof_at: NullableTimestamp;
  agent_version: Generated<string>;
  protocol_version: Generated<number>;
  interfaces: Json<DeviceInterface[]>;
  /** `interfaces` as the devices summary page shows them (JSON text), kept by a trigger (migration 20261205-201): never written. */
  interfaces_summary: ColumnType<unknown, never, never>;
  static_routes: Json<StaticRoute[]>;
  dhcp: Json<DhcpServer[]>;
  bgp: Json<Bgp>;
  firewall: Json<Firewall>;
  device_specific_rules_enabled: Generated<boolean>;
  mlpolicy_id: string | null;
  /** The compiled desired config, sealed: keyring.encrypt(JSON, desiredConfigAad(id)) (it holds tunnel and peer PSKs). */
  desired_config_enc: string | null;
  /** The tunnels in the desired config (tunnel status reads this, never the sealed config). */
  desired_tunnel_ids: Generated<string[]>;
  desired_hash: string | null;
  /** A fan-out changed the device's settings and answered before recompiling: desired_* are not yet current (services/fanout). */
  desired_stale: Generated<boolean>;
  applied_hash: string | null;
  connection: Generated<"never" | "connected" | "disconnected">;
  last_connected_at: NullableTimestamp;
  last_seen_at: NullableTimestamp;
  /** When the link ended (null while connected or never connected): the device-connection alert's clock. */
  disconnected_at: NullableTimestamp;
  sync_attempts: Generated<number>;
  auto_sync_paused: Generated<boolean>;
  /** Free-form tags, validated and deduplicated (services/devices/tags.ts); GIN-indexed. */
  tags: Generated<string[]>;
  /** What the last acknowledged stop/start action left the data plane in (services/devices/actions). */
  data_plane: Generated<"running" | "stopped">;
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
  /** When the periodic notification check first saw the tunnel pending (null when it is not). */
  pending_since: NullableTimestamp;
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
  /** What the member last reported (migration 301); `unknown` until it does. */
  state: Generated<VrrpRouterState>;
  state_since: NullableTimestamp;
  state_reported_at: NullableTimestamp;
}

export interface JobsTable {
  id: string;
  organization_id: string;
  device_id: string;
  type: JobType;
  state: JobState;
  tasks: Json<JobTask[]>;
  /** Null while its device is recompiled after a fan-out (devices.desired_stale). */
  target_hash: string | null;
  error: NullableJson<JobError>;
  corrected_at: NullableTimestamp;
  attempts: Generated<number>;
  created_by: string;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  /** The apply a running (or finished) job went out with, and the hash that apply carried. */
  apply_id: ColumnType<string | null, string | null | undefined, string | null>;
  sent_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** Diagnostic jobs (ping, traceroute, dns): their final result; null on configuration jobs. */
  result: NullableJson<unknown>;
  /** The request that queued the job (its jobs are `GET /api/jobs?group=<id>`), or an upgrade rollout's id. */
  group_id: ColumnType<string | null, string | null | undefined, never>;
}

export interface NotificationsTable {
  id: string;
  organization_id: string;
  device_id: string | null;
  event_type: string;
  title: string;
  details: string;
  severity: Severity;
  targets: Json<{
    deviceId: string | null;
    tunnelId: string | null;
    interfaceId: string | null;
    vrrpGroupId: string | null;
    /** Absent in rows written before it existed. */
    bgpNeighbor?: string | null;
  }>;
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

/** A purchased application installed on a device, with that device's settings (remote-vpn: pool, DNS, subnets). */
export interface AppInstallationsTable {
  id: string;
  organization_id: string;
  purchase_id: string;
  device_id: string;
  settings: Json<Record<string, unknown>>;
  installed_at: CreatedAt;
}

export interface GatewayInstancesTable {
  id: string;
  hostname: string;
  pid: number;
  started_at: CreatedAt;
  heartbeat_at: CreatedAt;
}

/** The websocket of a connected device: which instance holds it. */
export interface DeviceSessionsTable {
  device_id: string;
  session_id: string;
  instance_id: string;
  remote_address: Generated<string>;
  connected_at: CreatedAt;
}

/** One row per disconnected device, kept by a trigger on `devices` (migration 20261207-401; notify/checks.ts reads it). */
export interface DeviceDisconnectsTable {
  device_id: string;
  disconnected_at: Timestamp;
}

/**
 * A tunnel's list columns and status fields as the `tunnel-status` duty last derived them (migration 20261207-501;
 * services/tunnels/stored-status.ts): read only for tunnels without a marker in `tunnel_status_marks`.
 */
export interface TunnelStatusTable {
  /** The tunnel's. */
  id: string;
  organization_id: string;
  num: number;
  description: string;
  device_a: string;
  interface_a: string;
  device_b: string | null;
  interface_b: string | null;
  peer_id: string | null;
  pathlabel_id: string | null;
  created_at: Timestamp;
  tunnel_status: string;
  status: string;
  is_pending: boolean;
  a_reported: string;
  b_reported: string;
}

/** A change to a fact of tunnels' status not yet folded into `tunnel_status`: a device's tunnels, or one tunnel. */
export interface TunnelStatusMarksTable {
  organization_id: string;
  device_id: string | null;
  tunnel_id: string | null;
}

/** What one interface's public address did lately (rate limit of public IP/port changes). */
export interface PublicAddressHistory {
  publicIp: string;
  publicPort: number | null;
  /** Change times (ms since epoch) inside the window. */
  changes: number[];
  limited: boolean;
}

/** The last status a device reported. */
export interface DeviceStateTable {
  device_id: string;
  organization_id: string;
  /** Null until the first status. */
  reported_at: NullableTimestamp;
  received_at: CreatedAt;
  applied_hash: string | null;
  applying: Generated<boolean>;
  interfaces: ColumnType<InterfaceState[], string | undefined, string>;
  bgp: NullableJson<BgpState>;
  vrrp: ColumnType<DeviceVrrpState[], string | undefined, string>;
  health: NullableJson<Health>;
  /** By interface devId. */
  public_addresses: ColumnType<Record<string, PublicAddressHistory>, string | undefined, string>;
}

export interface DeviceVrrpState {
  groupId: string;
  state: VrrpRouterState;
  since: string | null;
}

export interface TunnelSamplesTable {
  tunnel_id: string;
  device_id: string;
  side: "a" | "b";
  at: Timestamp;
  up: boolean;
  loss: number;
  rtt: number;
  jitter: number;
  samples: number;
  /** Span of the window `loss` is over, ms (null from agents that do not say). */
  window_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** The agent's cumulative probe counters for the reported target (bigint, read as text). */
  sent: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  received: ColumnType<string | null, string | number | null | undefined, string | number | null>;
}

export type TunnelLatestTable = TunnelSamplesTable;

export interface GatewayDutiesTable {
  name: string;
  last_run_at: CreatedAt;
  runs: Generated<number>;
  last_instance: string | null;
}

export interface GatewayRepliesTable {
  id: string;
  payload: Json<unknown>;
  created_at: CreatedAt;
}

/** One notification delivery attempt (the Deliverer's log, migration 501). */
export interface NotificationDeliveriesTable {
  id: Generated<string>;
  organization_id: string;
  notification_id: string | null;
  delivery_id: string;
  channel: "email" | "webhook";
  target: string;
  event: string;
  attempt: number;
  status: "delivered" | "retrying" | "failed";
  response_code: number | null;
  error: string | null;
  duration_ms: number;
  at: CreatedAt;
}

/** A user's TOTP factor (migration 20261125-301); enabled_at null = enrolment not yet confirmed. */
export interface UserMfaTable {
  user_id: string;
  secret_enc: string;
  enabled_at: NullableTimestamp;
  last_time_step: number | null;
  failed_attempts: Generated<number>;
  blocked_until: NullableTimestamp;
  created_at: CreatedAt;
}

export interface MfaRecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

/** The step between a right password (or SSO sign-in) and the second factor. */
export interface MfaChallengesTable {
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  attempts: Generated<number>;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface SsoProvidersTable {
  id: string;
  organization_id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret_enc: string;
  allowed_domains: Json<string[]>;
  default_role: "manager" | "viewer";
  membership_scope: "organization" | "account";
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** An OpenID Connect sign-in between its start and its callback. */
export interface SsoLoginsTable {
  id: string;
  provider_id: string;
  state_hash: string;
  binding_hash: string;
  code_verifier_enc: string;
  nonce: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

/**
 * The LAN networks of each device as `cidr`, GiST-indexed (`inet_ops`), so the LAN overlap check of a
 * device change asks the index (`&&`) instead of reading every device of the organization. Derived
 * from `devices.interfaces` and `devices.firewall`; rewritten in the transaction of every write of
 * those (services/lan-index). `kind`: `lan` = a static subnet of an assigned LAN interface,
 * `published` = what the device publishes to the overlay (its LAN subnets after LAN 1:1 NAT).
 */
export interface DeviceLanSubnetsTable {
  device_id: string;
  organization_id: string;
  kind: "lan" | "published";
  /** Network address and prefix (host bits cleared), e.g. `10.1.2.0/24`. */
  subnet: string;
}

/** A set of jobs queued by one request (a bulk approval), followed with `GET /api/jobs?group=<id>`. */
export interface Database {
  device_lan_subnets: DeviceLanSubnetsTable;
  accounts: AccountsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  audit_log: AuditLogTable;
  registration_tokens: RegistrationTokensTable;
  password_resets: PasswordResetsTable;
  account_signups: AccountSignupsTable;
  device_dumps: DeviceDumpsTable;
  agent_signing_keys: AgentSigningKeysTable;
  agent_packages: AgentPackagesTable;
  agent_rollouts: AgentRolloutsTable;
  agent_rollout_devices: AgentRolloutDevicesTable;
  invitations: InvitationsTable;
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
  app_installations: AppInstallationsTable;
  gateway_instances: GatewayInstancesTable;
  device_disconnects: DeviceDisconnectsTable;
  device_sessions: DeviceSessionsTable;
  device_state: DeviceStateTable;
  tunnel_samples: TunnelSamplesTable;
  tunnel_latest: TunnelLatestTable;
  tunnel_status: TunnelStatusTable;
  tunnel_status_marks: TunnelStatusMarksTable;
  gateway_duties: GatewayDutiesTable;
  gateway_replies: GatewayRepliesTable;
  notification_deliveries: NotificationDeliveriesTable;
  user_mfa: UserMfaTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  sso_providers: SsoProvidersTable;
  sso_logins: SsoLoginsTable;
  live_events: LiveEventsTable;
  row_counts: RowCountsTable;
  row_updates: RowUpdatesTable;
  branding: BrandingTable;
  healing_actions: HealingActionsTable;
  healing_baselines: HealingBaselinesTable;
  stat_if_raw: StatIfRawTable;
  stat_if_1m: StatIfRollupTable;
  stat_if_1h: StatIfRollupTable;
  stat_health_raw: StatHealthRawTable;
  stat_health_1m: StatHealthRollupTable;
  stat_health_1h: StatHealthRollupTable;
  stat_tunnel_1m: StatTunnelRollupTable;
  stat_tunnel_1h: StatTunnelRollupTable;
  stat_state_changes: StatStateChangesTable;
  stat_rollup_progress: StatRollupProgressTable;
}

/** bigint counters: read as text by the drivers, written as numbers. */
type Counter = ColumnType<string, number | string, number | string>;
type OptionalCounter = ColumnType<string | null, number | string | null, number | string | null>;

/** Statistics history (migration 20261126-301, partitioned by time: services/statistics/partitions.ts). */
export interface StatIfCounters {
  rx_bytes: Counter;
  tx_bytes: Counter;
  rx_packets: OptionalCounter;
  tx_packets: OptionalCounter;
  rx_errors: OptionalCounter;
  tx_errors: OptionalCounter;
  rx_drops: OptionalCounter;
  tx_drops: OptionalCounter;
}

/** One interface's counter deltas over `seconds` ending at `at`. */
export interface StatIfRawTable extends StatIfCounters {
  at: Timestamp;
  organization_id: string;
  device_id: string;
  interface: string;
  seconds: number;
}

export interface StatIfRollupTable extends StatIfCounters {
  bucket: Timestamp;
  organization_id: string;
  device_id: string;
  interface: string;
  samples: number;
  seconds: number;
}

export interface StatHealthRawTable {
  at: Timestamp;
  organization_id: string;
  device_id: string;
  /** Statuses the means are over. */
  samples: number;
  cpu: number;
  cpu_max: number;
  memory: number;
  disk: number;
  uptime: number;
  temperature: number | null;
}

export interface StatHealthRollupTable {
  bucket: Timestamp;
  organization_id: string;
  device_id: string;
  samples: number;
  cpu_sum: number;
  cpu_max: number;
  memory_sum: number;
  memory_max: number;
  disk_sum: number;
  disk_max: number;
  uptime_max: number;
  temperature_sum: number | null;
  temperature_samples: number;
  temperature_max: number | null;
}

export interface StatTunnelRollupTable {
  bucket: Timestamp;
  organization_id: string;
  tunnel_id: string;
  side: string;
  samples: number;
  up_samples: number;
  loss_sum: number;
  loss_max: number;
  rtt_sum: number;
  rtt_max: number;
  jitter_sum: number;
  jitter_max: number;
}

export interface StatStateChangesTable {
  at: Timestamp;
  organization_id: string;
  device_id: string;
  kind: "bgp" | "vrrp";
  key: string;
  from_state: string | null;
  to_state: string;
}

export interface StatRollupProgressTable {
  name: string;
  done_until: Timestamp;
}

/** One healing action taken or suggested, with its evidence (migration 20261125-964). */
export interface HealingActionsTable {
  id: string;
  organization_id: string;
  device_id: string | null;
  tunnel_id: string | null;
  at: CreatedAt;
  kind: HealingKind;
  mode: "act" | "suggest";
  source: "agent" | "server";
  link: string;
  reason: string;
  before: ColumnType<Record<string, unknown>, string, string>;
  after: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  agent_ref: string | null;
}

/** The learned baseline of one (device, link) (migration 20261125-964; state: services/healing/baseline.ts). */
export interface HealingBaselinesTable {
  device_id: string;
  link: string;
  organization_id: string;
  state: ColumnType<unknown, string, string>;
  rerouting: Generated<boolean>;
  updated_at: CreatedAt;
}

/** Recent live events (GET /api/events replay); written by triggers, pruned after minutes. */
/** Per organization and counted table, deltas whose sum is its number of rows (migration 20261205-301, db/row-counts.ts). */
export interface RowCountsTable {
  organization_id: string;
  /** The counted table's name. */
  resource: string;
  /** bigint: pg gives it as text. */
  delta: ColumnType<string, number | bigint, never>;
  /** Statements summed into this row: part of the organization's list version (migration 20261206-201). */
  changes: ColumnType<string, number | bigint | undefined, never>;
}

/** Per table, the statements that updated columns its list filters on (migration 20261206-201, db/row-counts.ts). */
export interface RowUpdatesTable {
  resource: string;
  changes: ColumnType<string, number | bigint | undefined, never>;
}

export interface LiveEventsTable {
  id: ColumnType<string, never, never>;
  organization_id: string;
  event: Json<LiveEvent>;
  created_at: CreatedAt;
}

/** The installation's branding: one row (id 1). */
export interface BrandingTable {
  id: number;
  product_name: string | null;
  accent_color: string | null;
  logo: Buffer | null;
  logo_type: string | null;
  logo_version: Generated<number>;
  updated_at: CreatedAt;
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
export type PurchasedAppRow = Selectable<PurchasedAppsTable>;
export type AppInstallationRow = Selectable<AppInstallationsTable>;
export type DeviceStateRow = Selectable<DeviceStateTable>;
export type TunnelSampleRow = Selectable<TunnelSamplesTable>;
export type HealingActionRow = Selectable<HealingActionsTable>;
