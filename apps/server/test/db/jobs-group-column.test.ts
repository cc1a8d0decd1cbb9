/**
 * Migration 20261202-101: a job's group moved from the `job_groups` table to
 * `jobs.group_id`. Groups made before it (rows of `job_groups`) list the same
 * jobs after it, and down gives the table back as it was.
 */
import type { Job } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import * as migration from "../../src/db/migrations/20261202-101-jobs-group-column.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261202-101: jobs.group_id", () => {
  const t = useTestServer();

  it("carries every group over, both ways, and the groups list the same jobs", async () => {
    const groups: { id: string; jobs: string[] }[] = [];
    for (const n of [2, 3]) {
      const devices = [];
      for (let i = 0; i < n; i++) devices.push(await insertValidDevice(t, { approved: false }));
      const res = await t.api<{ jobGroup: string }>("POST", "/api/devices/approve", {
        token: t.admin.token,
        body: { deviceIds: devices.map((d) => d.id) },
      });
      expect(res.status, res.text).toBe(202);
      const listed = await t.api<Job[]>("GET", `/api/jobs?group=${res.body.jobGroup}`, { token: t.admin.token });
      expect(listed.body).toHaveLength(n);
      groups.push({ id: res.body.jobGroup, jobs: listed.body.map((j) => j.id).sort() });
    }
    const db = t.database.db;

    await migration.down(db as never);
    const rows = await sql<{ id: string; job_id: string; organization_id: string }>`
      select id, job_id, organization_id from job_groups`.execute(db);
    for (const g of groups) {
      const of = rows.rows.filter((r) => r.id === g.id);
      expect(of.map((r) => r.job_id).sort()).toEqual(g.jobs);
      expect(new Set(of.map((r) => r.organization_id))).toEqual(new Set([t.admin.orgId]));
    }
    const columns = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.columns where table_name = 'jobs' and column_name = 'group_id'`.execute(
      db,
    );
    expect(columns.rows[0]!.n).toBe(0);

    await migration.up(db as never);
    for (const g of groups) {
      const listed = await t.api<Job[]>("GET", `/api/jobs?group=${g.id}`, { token: t.admin.token });
      expect(listed.body.map((j) => j.id).sort()).toEqual(g.jobs);
    }
    const table = await sql<{ n: number }>`select count(*)::int as n from pg_tables where tablename = 'job_groups'`.execute(db);
    expect(table.rows[0]!.n).toBe(0);
  });
});
