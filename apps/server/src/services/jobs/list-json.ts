/**
 * The jobs list built as JSON by the database (issue 14), as the devices
 * summary and the tunnels are: each row of `GET /api/jobs` becomes its `Job`
 * object already (`json_build_object` over the job and its device, keys in
 * `toJob`'s order), joined by the database into the answer's array (`runListJson`). The
 * server no longer parses a job's tasks, error and result (jsonb), its four
 * dates, nor stringifies the page again.
 *
 * Same values as `toJob` (jobs.ts), which `GET /api/jobs/{id}`, the audit and
 * the tests keep using; jobs-list-json.test.ts compares the two. As there,
 * `result` is left out when the job has none (SQL NULL or a JSON null).
 */
import { sql } from "kysely";
import { isoTimestampSql } from "../../db/json.ts";

/** The job's keys before and after `result`, as `toJob` writes them (`j` the job, `d` its device). */
const BEFORE_RESULT = sql`'id', j.id, 'org', j.organization_id, 'type', j.type, 'state', j.state,
  'device', json_build_object('id', j.device_id, 'name', d.name, 'hostname', d.hostname),
  'tasks', j.tasks, 'targetHash', j.target_hash, 'error', j.error,
  'correctedAt', ${isoTimestampSql(sql.ref("j.corrected_at"))}, 'attempts', j.attempts`;
const AFTER_RESULT = sql`'createdBy', j.created_by, 'createdAt', ${isoTimestampSql(sql.ref("j.created_at"))},
  'startedAt', ${isoTimestampSql(sql.ref("j.started_at"))}, 'finishedAt', ${isoTimestampSql(sql.ref("j.finished_at"))}`;

/** A `Job` of row `j` with its device `d`, as JSON text. */
export const jobJson = sql<string>`(case when j.result is null or jsonb_typeof(j.result) = 'null'
    then json_build_object(${BEFORE_RESULT}, ${AFTER_RESULT})
    else json_build_object(${BEFORE_RESULT}, 'result', j.result, ${AFTER_RESULT}) end)::text`;
