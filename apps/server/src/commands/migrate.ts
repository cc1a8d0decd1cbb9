/** `tern-server migrate status` and `migrate up`: the database's schema against this server version. */
import { migrateToLatest } from "../db/migrate.ts";
import { readMigrationStatus } from "../db/migration-status.ts";
import { withDatabase } from "./database.ts";
import type { CliIo } from "./io.ts";
import { type GlobalOptions, loadSettings } from "./settings.ts";

export async function migrateStatus(io: CliIo, globals: GlobalOptions, options: { json?: boolean }): Promise<number> {
  const config = await loadSettings(io, globals);
  const status = await withDatabase(config, { what: "read its migrations", requireExisting: true }, (h) =>
    readMigrationStatus(h.db as never),
  );
  if (options.json) {
    io.out(`${JSON.stringify(status, null, 2)}\n`);
    return 0;
  }
  for (const m of status.applied) io.out(`applied  ${m.name}  ${m.at.toISOString()}\n`);
  for (const name of status.pending) io.out(`pending  ${name}\n`);
  for (const name of status.unknown) io.out(`unknown  ${name}  (applied by a newer server version)\n`);
  io.out(
    `${status.applied.length} applied, ${status.pending.length} pending${status.unknown.length ? `, ${status.unknown.length} unknown` : ""}${
      status.pending.length ? ": run `tern-server migrate up`" : ""
    }\n`,
  );
  return 0;
}

export async function migrateUp(io: CliIo, globals: GlobalOptions): Promise<number> {
  const config = await loadSettings(io, globals);
  const results = await withDatabase(config, { what: "migrate it" }, (h) => migrateToLatest(h.db as never));
  for (const r of results) io.out(`${r.status === "Success" ? "applied" : r.status.toLowerCase()}  ${r.migrationName}\n`);
  io.out(results.length ? `${results.length} migration(s) applied\n` : "the database is up to date\n");
  return 0;
}
