/**
 * The `tern_auth` notification names the transaction that sent it (its
 * `txid_current()`), so an instance that hears one change several times
 * drops its authentication cache once (auth/auth-cache.ts). Every pooled
 * connection LISTENs on the channel, beside the dedicated LISTEN connection:
 * the writer's connection hands the notification over before its COMMIT
 * answers, the others a moment later, and each later hearing dropped the
 * entries cached in between (a change of access cost a writer's instance
 * one clear per connection).
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function tern_auth_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_auth', txid_current()::text);
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function tern_auth_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_auth', '');
      return null;
    end $$`.execute(db);
}
