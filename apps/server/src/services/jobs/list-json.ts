/**
 * The jobs list built as JSON by the database (issue 14), as the devices
 * summary and the tunnels are: each row of `GET /api/jobs` becomes its `Job`
 * object already (db/json.ts's concatenated text over the job and its
 * device, keys in `toJob`'s order), joined by the database into the answer's array (`runListJson`). The
 * server no longer parses a job's tasks, error and result (jsonb), its four
 * dates, nor stringifies the page again.
 *
 * Same values as `toJob` (jobs.ts), which `GET /api/jobs/{id}`, the audit and
 * the tests keep using; jobs-list-json.test.ts compares the two. As there,
 * `result` is left out when the job has none (SQL NULL or a JSON null).
 */
import { sql } from "kysely";
import { constantSql } from "../../db/constant-sql.ts";
import { jsonAsIs, jsonObject, jsonQuoted, jsonString, jsonTimestamp } from "../../db/json.ts";

const j = (column: string) => sql.ref(`j.${column}`);

/** The job's keys before and after `result`, as `toJob` writes them (`j` the job, `d` its device). */
const BEFORE_RESULT = {
  id: jsonQuoted(j("id")),
  org: jsonQuoted(j("organization_id")),
  type: jsonString(j("type")),
  state: jsonString(j("state")),
  device: jsonObject({
    id: jsonQuoted(j("device_id")),
    name: jsonString(sql.ref("d.name")),
    hostname: jsonString(sql.ref("d.hostname")),
  }),
  tasks: jsonAsIs(j("tasks")),
  targetHash: jsonString(j("target_hash")),
  error: jsonAsIs(j("error")),
  correctedAt: jsonTimestamp(j("corrected_at")),
  attempts: jsonAsIs(j("attempts")),
};
const AFTER_RESULT = {
  createdBy: jsonString(j("created_by")),
  createdAt: jsonTimestamp(j("created_at")),
  startedAt: jsonTimestamp(j("started_at")),
  finishedAt: jsonTimestamp(j("finished_at")),
};

/** A `Job` of row `j` with its device `d`, as JSON text. */
export const jobJson = constantSql(sql<string>`(case when j.result is null or jsonb_typeof(j.result) = 'null'
    then ${jsonObject({ ...BEFORE_RESULT, ...AFTER_RESULT })}
    else ${jsonObject({ ...BEFORE_RESULT, result: jsonAsIs(j("result")), ...AFTER_RESULT })} end)`);
