/**
 * Errors the agent reports with a machine code. CLI commands print
 * `tern-agent: CODE: message`; the control link puts the code in front of the
 * message of an `apply-result` or `response`, so the server can match on it.
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
  "NOT_FOUND",
  "INVALID_REQUEST",
  "INTERNAL",
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AgentError";
  }
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
