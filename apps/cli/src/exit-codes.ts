/**
 * Exit codes scripts can rely on (docs/cli.md lists them). Every failure of
 * the CLI is a CliError with one of these, or an API/connection error mapped
 * here from its machine code.
 */
import { TernApiError, TernConnectionError } from "@tern/client";

export const ExitCode = {
  OK: 0,
  /** The API refused the request (validation, conflict, …), or another error. */
  API_ERROR: 1,
  /** Wrong command line: unknown command or option, missing argument, bad value. */
  USAGE: 2,
  /** Not logged in, or the session or token is no longer valid: run `tern login`. */
  AUTH: 3,
  /** The named resource does not exist (in this organization). */
  NOT_FOUND: 4,
  /** Logged in, but the role or token lacks the permission. */
  FORBIDDEN: 5,
  /** The server could not be reached. */
  UNREACHABLE: 6,
  /** A job that was waited for ended failed. */
  JOB_FAILED: 7,
  /** Interrupted (Ctrl-C). */
  INTERRUPTED: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** Machine code for --json output. */
    readonly code = "CLI_ERROR",
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, ExitCode.USAGE, "USAGE");
export const notLoggedIn = () => new CliError("not logged in: run `tern login`", ExitCode.AUTH, "NOT_LOGGED_IN");

/** The exit code and machine code of any error the CLI can meet. */
export function classify(err: unknown): { exitCode: ExitCode; code: string; message: string } {
  if (err instanceof CliError) return { exitCode: err.exitCode, code: err.code, message: err.message };
  if (err instanceof TernConnectionError) return { exitCode: ExitCode.UNREACHABLE, code: err.code, message: err.message };
  if (err instanceof TernApiError) {
    const exitCode =
      err.code === "UNAUTHENTICATED"
        ? ExitCode.AUTH
        : err.code === "FORBIDDEN"
          ? ExitCode.FORBIDDEN
          : err.code === "NOT_FOUND"
            ? ExitCode.NOT_FOUND
            : ExitCode.API_ERROR;
    const details = err.details.map((d) => `\n  ${d.path ? `${d.path}: ` : ""}${d.message}`).join("");
    const hint = err.code === "UNAUTHENTICATED" ? " (run `tern login`)" : "";
    return { exitCode, code: err.code, message: `${err.message}${hint}${details}` };
  }
  return { exitCode: ExitCode.API_ERROR, code: "ERROR", message: err instanceof Error ? err.message : String(err) };
}
