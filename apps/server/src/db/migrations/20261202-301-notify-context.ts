/**
 * The rule engine's device contexts (notify/device-context.ts) are dropped
 * when what they hold changes without a new device config: a device's name
 * (its own context and those of its tunnels' far ends), a peer's name, a
 * tunnel's thresholds (and, to be safe, any change of a tunnel's ends or
 * number). Each change sends the devices concerned on `tern_context`: their
 * ids joined by commas, or `*` (every context) when they would not fit in a
 * NOTIFY payload. The contexts no longer need to be re-read every 30 s.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // 200 ids of 37 characters stay below NOTIFY's 8000 bytes.
  await sql`create function tern_context_changed(ids uuid[]) returns void language plpgsql as $$
    declare kept uuid[];
    begin
      select array_agg(distinct i) into kept from unnest(ids) i where i is not null;
      if kept is null then return; end if;
      if cardinality(kept) > 200 then
        perform pg_notify('tern_context', '*');
      else
        perform pg_notify('tern_context', array_to_string(kept, ','));
      end if;
    end $$`.execute(db);

  await sql`create function tern_context_devices() returns trigger language plpgsql as $$
    begin
      perform tern_context_changed(array[new.id]
        || array(select t.device_a from tunnels t where t.device_b = new.id)
        || array(select t.device_b from tunnels t where t.device_a = new.id));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_context_devices after update of name on devices
    for each row when (old.name is distinct from new.name) execute function tern_context_devices()`.execute(db);

  await sql`create function tern_context_tunnels() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform tern_context_changed(array[new.device_a, new.device_b]);
      elsif tg_op = 'DELETE' then
        perform tern_context_changed(array[old.device_a, old.device_b]);
      elsif old.notifications is distinct from new.notifications or old.num is distinct from new.num
         or old.device_a is distinct from new.device_a or old.device_b is distinct from new.device_b
         or old.interface_a is distinct from new.interface_a or old.interface_b is distinct from new.interface_b
         or old.peer_id is distinct from new.peer_id then
        perform tern_context_changed(array[old.device_a, old.device_b, new.device_a, new.device_b]);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_context_tunnels after insert or update or delete on tunnels
    for each row execute function tern_context_tunnels()`.execute(db);

  await sql`create function tern_context_peers() returns trigger language plpgsql as $$
    begin
      perform tern_context_changed(array(select t.device_a from tunnels t where t.peer_id = new.id));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_context_peers after update of name on peers
    for each row when (old.name is distinct from new.name) execute function tern_context_peers()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists tern_context_peers on peers`.execute(db);
  await sql`drop trigger if exists tern_context_tunnels on tunnels`.execute(db);
  await sql`drop trigger if exists tern_context_devices on devices`.execute(db);
  await sql`drop function if exists tern_context_peers()`.execute(db);
  await sql`drop function if exists tern_context_tunnels()`.execute(db);
  await sql`drop function if exists tern_context_devices()`.execute(db);
  await sql`drop function if exists tern_context_changed(uuid[])`.execute(db);
}
