/** The one problem shape every validator returns, and its mapping to the API error body. */
import type { ErrorBody, ErrorCode } from "@tern/protocol";

/** One thing wrong with a request: where (dotted path into the body), what, and the machine code. */
export interface Problem {
  path: string;
  message: string;
  code: ErrorCode;
}

export const problem = (code: ErrorCode, path: string, message: string): Problem => ({ code, path, message });
export const invalid = (path: string, message: string): Problem => problem("VALIDATION_FAILED", path, message);

/**
 * The code a response with several problems carries: plain validation errors
 * first (fix the request before arguing about the rest), then missing
 * references, then overlaps and conflicts with other resources.
 */
const PRECEDENCE: readonly ErrorCode[] = [
  "VALIDATION_FAILED",
  "NOT_FOUND",
  "TUNNEL_RANGE_EXHAUSTED",
  "LAN_OVERLAPPING",
  "TUNNEL_OVERLAPPING",
  "CONFLICT",
];

/** The API error body for a list of problems, or null when there are none. */
export function problemsToErrorBody(problems: readonly Problem[]): ErrorBody | null {
  const first = problems[0];
  if (first === undefined) return null;
  const code = PRECEDENCE.find((c) => problems.some((p) => p.code === c)) ?? first.code;
  const lead = problems.find((p) => p.code === code) ?? first;
  const error =
    problems.length === 1
      ? lead.message
      : `${lead.message} (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})`;
  return { error, code, details: problems.map(({ path, message }) => ({ path, message })) };
}
