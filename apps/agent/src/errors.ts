/**
 * The one error type of the agent, with a machine code from one list. CLI
 * commands print `tern-agent: CODE: message`; the control link puts the code
 * in front of the message of an `apply-result` or `response`, so the server
 * can match on it; tests assert the code, not the message.
 *
 * - INVALID_CONFIG: a config (or a section of it) cannot be rendered; thrown
 *   before anything on the system changes, with the dotted `path` of the
 *   offending field ("tunnels.0.esp.proposal").
 * - DAEMON_FAILED: a daemon did not start, stop or reload as asked (the
 *   message ends with the tail of its output or log).
 * - DRIVER_FAILED: an apply failed in a driver and was rolled back.
 * - INVALID_REQUEST: a request's parameters (server request, troubleshooting
 *   page) do not match the protocol.
 */
export const AGENT_ERROR_CODES = [
  "USAGE",
  "INVALID_CONFIG",
  "HASH_MISMATCH",
  "NOT_REGISTERED",
  "REGISTER_FAILED",
  "LOCKED",
  "LINK_NOT_FOUND",
  "ROUTE_CONFLICT",
  "DRIVER_FAILED",
  "DAEMON_FAILED",
  "NOT_FOUND",
  "INVALID_REQUEST",
  /** A config arrived while the data plane is stopped (a `stop` action): `start` first. */
  "DATA_PLANE_STOPPED",
  "INTERNAL",
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    /** Dotted path into the DeviceConfig (or the request) that the error is about. */
    readonly path?: string,
  ) {
    super(path ? `${path}: ${message}` : message);
    this.name = "AgentError";
  }
}

/** An INVALID_CONFIG error about the field at `path`. */
export function invalidConfig(path: string, message: string): AgentError {
  return new AgentError("INVALID_CONFIG", message, path);
}

/** `CODE: message` for any thrown value; errors without a code are reported as-is. */
export function describeError(err: unknown): string {
  if (err instanceof AgentError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Turns zod issues into one readable line: `path: message; path: message`. */
export function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 10)
    .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}
