/**
 * `tern-server doctor`: checks the settings, the data directory, the server
 * key, the database (reachable, schema, key, clock), the port and SMTP; prints
 * each with ok/warn/fail and the fix; exits 1 when any check fails.
 */
import { CliError } from "../cli-error.ts";
import { embeddedDatabaseExists } from "../database.ts";
import type { CliIo } from "../io.ts";
import { type GlobalOptions, loadSettings } from "../settings.ts";
import { type CheckResult, fail, ok } from "./check.ts";
import { checkDatabase } from "./database.ts";
import { checkDataDir, checkServerKey } from "./files.ts";
import { checkPort } from "./port.ts";
import { checkSmtp } from "./smtp.ts";

function print(io: CliIo, r: CheckResult): void {
  io.out(`${r.verdict.padEnd(5)} ${r.name.padEnd(15)} ${r.detail}${r.fix ? `\n${" ".repeat(22)}fix: ${r.fix}` : ""}\n`);
}

export async function doctor(io: CliIo, globals: GlobalOptions, options: { json?: boolean }): Promise<number> {
  const results: CheckResult[] = [];
  const report = (r: CheckResult | null) => {
    if (!r) return;
    results.push(r);
    if (!options.json) print(io, r);
  };
  try {
    const config = await loadSettings(io, globals);
    report(
      ok(
        "configuration",
        `${config.DATABASE_URL ? "PostgreSQL" : "embedded database"}, data in ${config.TERN_DATA_DIR}, listening on ${config.HOST}:${config.PORT}`,
      ),
    );
    report(await checkDataDir(config));
    const dbExists = config.DATABASE_URL ? true : await embeddedDatabaseExists(config);
    const key = await checkServerKey(config, dbExists && !config.DATABASE_URL);
    report(key.result);
    for (const r of await checkDatabase(config, key.key)) report(r);
    report(await checkPort(config));
    report(await checkSmtp(config));
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    report(fail("configuration", err.message, err.fix ?? "fix the settings"));
  }
  const failed = results.filter((r) => r.verdict === "fail").length;
  const warned = results.filter((r) => r.verdict === "warn").length;
  if (options.json) io.out(`${JSON.stringify({ ok: failed === 0, checks: results }, null, 2)}\n`);
  else io.out(`\n${failed ? `${failed} check(s) failed` : "no check failed"}${warned ? `, ${warned} warning(s)` : ""}\n`);
  return failed ? 1 : 0;
}
