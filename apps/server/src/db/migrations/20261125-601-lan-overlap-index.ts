/**
 * The LAN overlap check of a device change read every device of the
 * organization (about 850 ms per approval at 5,000 devices). `device_lan_subnets`
 * holds each device's LAN networks as `cidr` with a GiST index (`inet_ops`, in
 * core PostgreSQL and PGlite alike) so the check asks `subnet && $net` instead;
 * existing devices are filled in here. `job_groups` names the jobs one request
 * queued (a bulk approval), for `GET /api/jobs?group=<id>` instead of a
 * Location header listing every job id.
 * Frozen once landed, except that the backfill derives rows with the live
 * `lanIndexRows` (the same derivation the service keeps writing).
 */
import { type Kysely, sql } from "kysely";
import { syncLanIndex } from "../../services/lan-index/store.ts";
import type { Db } from "../schema.ts";

const PAGE = 500;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table device_lan_subnets (
      device_id uuid not null references devices(id) on delete cascade,
      organization_id uuid not null references organizations(id) on delete cascade,
      kind text not null check (kind in ('lan', 'published')),
      subnet cidr not null,
      primary key (device_id, kind, subnet)
    )`.execute(db);
  await sql`create index device_lan_subnets_subnet on device_lan_subnets using gist (subnet inet_ops)`.execute(db);
  await sql`
    create table job_groups (
      id uuid not null,
      organization_id uuid not null references organizations(id) on delete cascade,
      job_id uuid not null references jobs(id) on delete cascade,
      primary key (id, job_id)
    )`.execute(db);
  await sql`create index job_groups_job on job_groups (job_id)`.execute(db);

  const tdb = db as unknown as Db;
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const page = await tdb
      .selectFrom("devices")
      .select(["id", "organization_id", "interfaces", "firewall"])
      .where("id", ">", after)
      .orderBy("id")
      .limit(PAGE)
      .execute();
    for (const d of page)
      await syncLanIndex(tdb, { id: d.id, organizationId: d.organization_id, interfaces: d.interfaces, firewall: d.firewall });
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.id;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table job_groups`.execute(db);
  await sql`drop table device_lan_subnets`.execute(db);
}
