/**
 * Fleet-scale reads (issue 14):
 *
 * 1. Indexes for the default and common sorts of the large lists, scoped to
 *    the organization and ending in the list's tiebreaker, so a page is read in
 *    order from the index and stops after `offset + limit` rows. They are built
 *    `NULLS FIRST` because the list code sorts `asc nulls first` / `desc nulls
 *    last` (http/list-query.ts): a forward scan serves `asc`, a backward scan
 *    `desc`, on both databases.
 * 2. Triggers that publish on the `tern_auth` channel whenever something an
 *    authenticated request's access is derived from changes (sessions, users,
 *    memberships, organizations, accounts, 2FA enrolment, access tokens), so
 *    every instance drops its authentication cache (auth/auth-cache.ts) at
 *    once. An access token's `last_used_at` bookkeeping does not count.
 *
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

const INDEXES: [name: string, table: string, columns: string][] = [
  ["devices_org_name_list_idx", "devices", "organization_id, name nulls first, id"],
  ["devices_org_hostname_list_idx", "devices", "organization_id, hostname nulls first, id"],
  ["jobs_org_created_list_idx", "jobs", "organization_id, created_at nulls first, id"],
  ["notifications_org_last_seen_list_idx", "notifications", "organization_id, last_seen_at nulls first, id"],
  ["tunnels_org_num_list_idx", "tunnels", "organization_id, num nulls first, id"],
];

/** Tables whose every change may change someone's access. */
const AUTH_TABLES = ["sessions", "users", "memberships", "organizations", "accounts", "user_mfa"];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, table, columns] of INDEXES) {
    await sql`create index ${sql.id(name)} on ${sql.id(table)} (${sql.raw(columns)})`.execute(db);
  }

  await sql`create function tern_auth_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_auth', '');
      return null;
    end $$`.execute(db);
  for (const table of AUTH_TABLES) {
    // One notification per statement (and PostgreSQL folds equal ones within a transaction).
    await sql`create trigger ${sql.id(`${table}_auth_changed`)} after insert or update or delete or truncate
      on ${sql.id(table)} for each statement execute function tern_auth_changed()`.execute(db);
  }
  // Keys: a change of anything but the last-used time (written at most once a minute per key).
  await sql`create trigger access_tokens_auth_changed after update on access_tokens for each row
    when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
    execute function tern_auth_changed()`.execute(db);
  await sql`create trigger access_tokens_auth_removed after delete or truncate on access_tokens
    for each statement execute function tern_auth_changed()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger access_tokens_auth_removed on access_tokens`.execute(db);
  await sql`drop trigger access_tokens_auth_changed on access_tokens`.execute(db);
  for (const table of AUTH_TABLES) {
    await sql`drop trigger ${sql.id(`${table}_auth_changed`)} on ${sql.id(table)}`.execute(db);
  }
  await sql`drop function tern_auth_changed()`.execute(db);
  for (const [name] of INDEXES) await sql`drop index ${sql.id(name)}`.execute(db);
}
