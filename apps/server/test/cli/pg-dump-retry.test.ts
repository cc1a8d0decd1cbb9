/**
 * `tern-server backup` on PostgreSQL: pg_dump fails when the running server changes its schema under it (the
 * statistics duty creates and drops partitions), so a failed dump is tried again, up to PG_DUMP_TRIES times.
 * A pg_dump on PATH that fails a given number of times stands in front of the real one.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_DUMP_TRIES, PgToolError, pgDump } from "../../src/services/backup/pg-tools.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const url = process.env.TERN_TEST_DATABASE_URL;

describe.runIf(testDatabaseKind() === "postgres" && url)("pg_dump tried again after a failure", () => {
  let dir: string;
  const path0 = process.env.PATH;
  beforeAll(async () => {
    const real = execFileSync("sh", ["-c", "command -v pg_dump"], { encoding: "utf8" }).trim();
    dir = await mkdtemp(path.join(os.tmpdir(), "tern-pg-dump-retry-"));
    await writeFile(
      path.join(dir, "pg_dump"),
      `#!/bin/sh
n=$(cat "${dir}/tries" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "${dir}/tries"
case "$1" in --version) exec "${real}" "$@";; esac
if [ "$n" -le "$(cat "${dir}/fail")" ]; then echo "pg_dump: error: query failed: ERROR: could not open relation with OID 1" >&2; exit 1; fi
exec "${real}" "$@"
`,
    );
    await chmod(path.join(dir, "pg_dump"), 0o755);
    process.env.PATH = `${dir}:${path0}`;
  });
  afterAll(async () => {
    process.env.PATH = path0;
    await rm(dir, { recursive: true, force: true });
  });

  const dumpFailing = async (fails: number) => {
    await writeFile(path.join(dir, "fail"), String(fails));
    await writeFile(path.join(dir, "tries"), "0");
    const heard: string[] = [];
    const file = path.join(dir, `dump-${fails}`);
    const result = await pgDump(url!, file, (err) => heard.push(err.message)).then(
      () => null,
      (err: unknown) => err,
    );
    return { result, heard, file };
  };

  it("a dump that fails twice is tried again and written; each retry is told", async () => {
    const { result, heard, file } = await dumpFailing(PG_DUMP_TRIES - 1);
    expect(result).toBeNull();
    expect(heard).toHaveLength(PG_DUMP_TRIES - 1);
    expect(heard[0]).toMatch(/could not open relation/);
    expect((await stat(file)).size).toBeGreaterThan(1000);
  }, 30_000);

  it("a dump that fails every time fails with pg_dump's error after PG_DUMP_TRIES tries", async () => {
    const { result, heard } = await dumpFailing(PG_DUMP_TRIES);
    expect(result).toBeInstanceOf(PgToolError);
    expect((result as Error).message).toMatch(/could not open relation/);
    expect(heard).toHaveLength(PG_DUMP_TRIES - 1);
  }, 30_000);
});
