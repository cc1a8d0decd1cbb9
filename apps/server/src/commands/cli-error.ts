/**
 * An error a command reports as one line: what went wrong and how to fix it.
 * The process prints `tern-server: <message>; <fix>` and exits non-zero, with
 * no stack trace unless asked (--debug or TERN_LOG_LEVEL=debug/trace).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly fix?: string,
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "CliError";
  }

  /** The one line printed on stderr. */
  line(): string {
    return `tern-server: ${this.message}${this.fix ? `; ${this.fix}` : ""}`;
  }
}

/** True when the user asked for stack traces. */
export function debugRequested(env: Record<string, string | undefined>, flag: boolean | undefined): boolean {
  return flag === true || env.TERN_LOG_LEVEL === "debug" || env.TERN_LOG_LEVEL === "trace";
}
