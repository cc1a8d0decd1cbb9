/**
 * The network resources of the spec: registration tokens, devices, path
 * labels, peers, tunnels, multi-link policies, VRRP groups, jobs,
 * notifications and their settings, purchased applications.
 * Frozen once landed: change the schema with a new migration.
 *
 * Device sections (interfaces, routes, DHCP, BGP, firewall) are jsonb in the
 * shape of the protocol's Device resource: they are always read and written
 * whole, validated by the protocol schema, and compiled into the device's
 * desired config.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable("registration_tokens")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz(3)")
    .addColumn("uses", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("registration_tokens_org_idx").on("registration_tokens").column("organization_id").execute();

  await db.schema
    .createTable("path_labels")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("color", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("path_labels_org_name_key", ["organization_id", "name"])
    .execute();

  await db.schema
    .createTable("mlpolicies")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("rules", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("mlpolicies_org_name_key", ["organization_id", "name"])
    .execute();

  await db.schema
    .createTable("devices")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("hostname", "text", (c) => c.notNull())
    .addColumn("machine_id", "text", (c) => c.notNull())
    .addColumn("is_approved", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("device_token_hash", "text", (c) => c.notNull().unique())
    .addColumn("agent_version", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("protocol_version", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("interfaces", "jsonb", (c) => c.notNull())
    .addColumn("static_routes", "jsonb", (c) => c.notNull())
    .addColumn("dhcp", "jsonb", (c) => c.notNull())
    .addColumn("bgp", "jsonb", (c) => c.notNull())
    .addColumn("firewall", "jsonb", (c) => c.notNull())
    .addColumn("device_specific_rules_enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("mlpolicy_id", "uuid", (c) => c.references("mlpolicies.id").onDelete("set null"))
    // What the server wants on the device (compiled config and its hash) and what the device last reported.
    .addColumn("desired_config", "jsonb")
    .addColumn("desired_hash", "text")
    .addColumn("applied_hash", "text")
    .addColumn("connection", "text", (c) =>
      c.notNull().defaultTo("never").check(sql`connection in ('never', 'connected', 'disconnected')`),
    )
    .addColumn("last_connected_at", "timestamptz(3)")
    .addColumn("last_seen_at", "timestamptz(3)")
    // Self-healing: automatic sync attempts since the last change, and whether auto-sync is paused.
    .addColumn("sync_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("auto_sync_paused", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("devices_org_machine_key", ["organization_id", "machine_id"])
    .execute();
  await db.schema.createIndex("devices_org_name_idx").on("devices").columns(["organization_id", "name"]).execute();
  await db.schema.createIndex("devices_mlpolicy_idx").on("devices").column("mlpolicy_id").execute();

  await db.schema
    .createTable("peers")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    // The peer's fields (protocol PeerCreate) without the PSK.
    .addColumn("config", "jsonb", (c) => c.notNull())
    // AES-256-GCM with the server key, the row id as associated data.
    .addColumn("psk_enc", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("peers_org_name_key", ["organization_id", "name"])
    .execute();

  await db.schema
    .createTable("tunnels")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("num", "integer", (c) => c.notNull())
    .addColumn("device_a", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("interface_a", "uuid", (c) => c.notNull())
    .addColumn("device_b", "uuid", (c) => c.references("devices.id").onDelete("cascade"))
    .addColumn("interface_b", "uuid")
    .addColumn("peer_id", "uuid", (c) => c.references("peers.id").onDelete("restrict"))
    .addColumn("pathlabel_id", "uuid", (c) => c.references("path_labels.id").onDelete("set null"))
    // Order-independent identity of the two ends, so the same tunnel cannot be created twice.
    .addColumn("endpoint_key", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    // Per-tunnel IKEv2 secret of device-to-device tunnels, encrypted like peer PSKs; null for peer tunnels.
    .addColumn("psk_enc", "text")
    .addColumn("notifications", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("tunnels_org_num_key", ["organization_id", "num"])
    .addUniqueConstraint("tunnels_org_endpoints_key", ["organization_id", "endpoint_key"])
    .addCheckConstraint("tunnels_b_or_peer", sql`(device_b is null and interface_b is null) <> (peer_id is null)`)
    .execute();
  await db.schema.createIndex("tunnels_device_a_idx").on("tunnels").column("device_a").execute();
  await db.schema.createIndex("tunnels_device_b_idx").on("tunnels").column("device_b").execute();
  await db.schema.createIndex("tunnels_peer_idx").on("tunnels").column("peer_id").execute();

  await db.schema
    .createTable("vrrp_groups")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("virtual_router_id", "integer", (c) => c.notNull().check(sql`virtual_router_id between 1 and 255`))
    .addColumn("virtual_ip", "text", (c) => c.notNull())
    .addColumn("preemption", "boolean", (c) => c.notNull())
    .addColumn("accept_mode", "boolean", (c) => c.notNull())
    .addColumn("advert_interval_ms", "integer", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("vrrp_groups_org_vrid_key", ["organization_id", "virtual_router_id"])
    .execute();
  await db.schema
    .createTable("vrrp_members")
    .addColumn("group_id", "uuid", (c) => c.notNull().references("vrrp_groups.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("interface", "text", (c) => c.notNull())
    .addColumn("priority", "integer", (c) => c.notNull())
    .addColumn("track_optional", "jsonb", (c) => c.notNull())
    .addColumn("track_mandatory", "jsonb", (c) => c.notNull())
    .addPrimaryKeyConstraint("vrrp_members_pkey", ["group_id", "device_id"])
    .execute();
  await db.schema.createIndex("vrrp_members_device_idx").on("vrrp_members").column("device_id").execute();

  await db.schema
    .createTable("jobs")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('queued', 'running', 'complete', 'failed')`))
    .addColumn("tasks", "jsonb", (c) => c.notNull())
    .addColumn("target_hash", "text", (c) => c.notNull())
    .addColumn("error", "jsonb")
    .addColumn("corrected_at", "timestamptz(3)")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("started_at", "timestamptz(3)")
    .addColumn("finished_at", "timestamptz(3)")
    .execute();
  await db.schema.createIndex("jobs_org_created_idx").on("jobs").columns(["organization_id", "created_at"]).execute();
  await db.schema.createIndex("jobs_device_state_idx").on("jobs").columns(["device_id", "state"]).execute();

  await db.schema
    .createTable("notifications")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.references("devices.id").onDelete("cascade"))
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("details", "text", (c) => c.notNull())
    .addColumn("severity", "text", (c) => c.notNull().check(sql`severity in ('info', 'warning', 'critical')`))
    .addColumn("targets", "jsonb", (c) => c.notNull())
    // Identifies the condition (event + targets): a repeat while open increments `count`.
    .addColumn("dedup_key", "text", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("resolved", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("is_read", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("last_seen_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("resolved_at", "timestamptz(3)")
    .execute();
  await db.schema
    .createIndex("notifications_open_key")
    .on("notifications")
    .columns(["organization_id", "dedup_key"])
    .unique()
    .where(sql.ref("resolved"), "=", false)
    .execute();
  await db.schema
    .createIndex("notifications_org_created_idx")
    .on("notifications")
    .columns(["organization_id", "created_at"])
    .execute();
  await db.schema
    .createIndex("notifications_pending_idx")
    .on("notifications")
    .column("device_id")
    .where(sql<boolean>`resolved = false and is_read = false`)
    .execute();

  await db.schema
    .createTable("notification_settings")
    .addColumn("organization_id", "uuid", (c) => c.primaryKey().references("organizations.id").onDelete("cascade"))
    .addColumn("rules", "jsonb", (c) => c.notNull())
    .addColumn("email", "jsonb", (c) => c.notNull())
    .addColumn("webhook", "jsonb", (c) => c.notNull())
    .addColumn("webhook_secret_enc", "text")
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createTable("account_notification_defaults")
    .addColumn("account_id", "uuid", (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
    .addColumn("rules", "jsonb", (c) => c.notNull())
    .addColumn("email", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("purchased_apps")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("app_id", "text", (c) => c.notNull())
    .addColumn("state", "jsonb", (c) => c.notNull())
    .addColumn("last_action", "jsonb")
    .addColumn("purchased_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("purchased_apps_org_app_key", ["organization_id", "app_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "purchased_apps",
    "account_notification_defaults",
    "notification_settings",
    "notifications",
    "jobs",
    "vrrp_members",
    "vrrp_groups",
    "tunnels",
    "peers",
    "devices",
    "mlpolicies",
    "path_labels",
    "registration_tokens",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
