/**
 * The `tern-server` command line (commander): every subcommand, the options
 * they share, and one error path (CliError → one line on stderr, exit code).
 * Exit codes: 0 ok, 1 failed (or a failed doctor check), 2 usage.
 */
import { Command, CommanderError } from "commander";
import { SERVER_VERSION } from "../version.ts";
import { adminCreateUser, adminResetPassword } from "./admin.ts";
import { backup } from "./backup.ts";
import { CliError, debugRequested } from "./cli-error.ts";
import { doctor } from "./doctor/doctor.ts";
import { type CliIo, EXIT } from "./io.ts";
import { migrateStatus, migrateUp } from "./migrate.ts";
import { restore } from "./restore.ts";
import { serve } from "./serve.ts";
import type { GlobalOptions } from "./settings.ts";

export function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command("tern-server")
    .description("Tern management server: run it, migrate its database, administer users, back up and restore, check its health.")
    .version(SERVER_VERSION, "-V, --version", "print the version")
    .option(
      "--settings <file>",
      "read settings from this file (KEY=value lines, like /etc/tern/server.env); the environment wins",
    )
    .option("--data-dir <dir>", "the data directory (overrides TERN_DATA_DIR)")
    .option("--debug", "print stack traces of errors (also TERN_LOG_LEVEL=debug)")
    .helpCommand(true)
    .showHelpAfterError("(tern-server --help lists the commands)")
    .exitOverride()
    .configureOutput({ writeOut: (t) => io.out(t), writeErr: (t) => io.err(t) });
  const globals = () => program.opts<GlobalOptions>();

  program
    .command("serve")
    .description("run the server (what `npm start` runs): REST API, device gateway, jobs, notifications")
    .option("-p, --port <port>", "listen on this port (overrides PORT)")
    .option("--host <address>", "listen on this address (overrides HOST)")
    .action(async (options) => setExitCode(await serve(io, globals(), options)));

  const migrate = program.command("migrate").description("the database schema: which migrations ran, run the pending ones");
  migrate
    .command("status")
    .description("list applied and pending migrations")
    .option("--json", "print JSON")
    .action(async (options) => setExitCode(await migrateStatus(io, globals(), options)));
  migrate
    .command("up")
    .description("run the pending migrations (the server also runs them when it starts)")
    .action(async () => setExitCode(await migrateUp(io, globals())));

  const admin = program
    .command("admin")
    .description(
      "user administration on the database itself (works with the server stopped; the embedded database needs it stopped)",
    );
  admin
    .command("create-user")
    .description("create a user; the password is asked on the terminal, or read from stdin with --password-stdin")
    .requiredOption("--email <address>", "the user's e-mail address (their login)")
    .option("--name <name>", "display name")
    .option("--password-stdin", "read the password from the first line of stdin")
    .option("--generate-password", "generate a password and print it once")
    .option("--new-account <name>", "also create an account of this name (with one organization) owned by the user")
    .option("--org-name <name>", "the name of the new account's organization", "Default organization")
    .option("--account <id>", "make the user a member of this account (with --role)")
    .option("--org <id>", "make the user a member of this organization (with --role)")
    .option("--role <role>", "owner, manager or viewer (default viewer) with --account/--org")
    .option("--json", "print JSON")
    .action(async (options) => setExitCode(await adminCreateUser(io, globals(), options)));
  admin
    .command("reset-password")
    .description("set a new password (generated and printed, or read from stdin); revokes the user's sessions and API keys")
    .argument("<email>", "the user's e-mail address")
    .option("--password-stdin", "read the new password from the first line of stdin instead of generating one")
    .option("--keep-api-keys", "keep the API keys the user created (default: delete them with the sessions)")
    .option("--json", "print JSON")
    .action(async (address, options) => setExitCode(await adminResetPassword(io, globals(), address, options)));

  program
    .command("backup")
    .description(
      "write one archive with the database, the server key and a manifest (the embedded database needs the server stopped; PostgreSQL is dumped with pg_dump while it runs)",
    )
    .argument("[file]", "the archive to write (default: tern-backup-<time>.tar.gz here)")
    .option("--no-key", "leave the server key out (then keep it safe yourself: without it the encrypted secrets are lost)")
    .option("--force", "overwrite the file if it exists")
    .action(async (file, options) => setExitCode(await backup(io, globals(), file, options)));
  program
    .command("restore")
    .description("restore a backup into an empty data directory or an empty PostgreSQL database (DATABASE_URL)")
    .argument("<file>", "an archive made by `tern-server backup`")
    .option("--force", "restore over a non-empty target (an embedded database is kept as pgdata.replaced-<time>)")
    .option(
      "--without-key",
      "restore a backup made with --no-key although the server key is not at hand (encrypted secrets are lost)",
    )
    .action(async (file, options) => setExitCode(await restore(io, globals(), file, options)));

  program
    .command("doctor")
    .description(
      "check the settings, data directory, server key, database, clock, port and SMTP; say what to fix (exit 1 on a failed check)",
    )
    .option("--json", "print JSON")
    .action(async (options) => setExitCode(await doctor(io, globals(), options)));

  return program;
}

/** Runs one command line (argv without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const debug = debugRequested(io.env, program.opts<GlobalOptions>().debug);
    const failure =
      err instanceof CliError
        ? err
        : new CliError(
            err instanceof Error ? err.message.split("\n").join(" ") : String(err),
            "run with --debug for the details",
            1,
            {
              cause: err,
            },
          );
    io.err(`${failure.line()}\n`);
    if (debug) io.err(`${(failure.cause as Error | undefined)?.stack ?? failure.stack}\n`);
    return failure.exitCode;
  }
}
