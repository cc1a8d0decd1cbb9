/** Turns a raw websocket frame into a validated DeviceMessage, or says what is wrong with it. */
import { DeviceMessage } from "@tern/protocol";
import { findJsonProblem, MAX_JSON_DEPTH } from "../http/input/json-body.ts";

export type Inbound =
  | { ok: true; message: DeviceMessage }
  | { ok: false; kind: "not-json" | "invalid"; code: "BAD_MESSAGE" | "VALIDATION_FAILED"; message: string };

const MAX_ISSUES = 5;

export function parseInbound(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): Inbound {
  if (isBinary)
    return { ok: false, kind: "not-json", code: "BAD_MESSAGE", message: "binary frames are not accepted: send JSON text" };
  const text = Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, kind: "not-json", code: "BAD_MESSAGE", message: `message is not JSON: ${(err as Error).message}` };
  }
  // Before the schema: a NUL would make the database refuse a whole status batch of many devices, and a
  // hostile nesting depth costs the schema walk. Unknown fields stay accepted (a newer agent's additions).
  const problem = mayHoldJsonProblem(text) ? findJsonProblem(json) : null;
  if (problem)
    return {
      ok: false,
      kind: "invalid",
      code: "VALIDATION_FAILED",
      message: `invalid message: ${problem.path || "(message)"}: ${problem.message}`,
    };
  const parsed = DeviceMessage.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, MAX_ISSUES)
      .map((i) => `${i.path.join(".") || "(message)"}: ${i.message}`)
      .join("; ");
    const type =
      typeof (json as { type?: unknown })?.type === "string" ? ` (type "${(json as { type: string }).type.slice(0, 40)}")` : "";
    return { ok: false, kind: "invalid", code: "VALIDATION_FAILED", message: `invalid message${type}: ${issues}` };
  }
  return { ok: true, message: parsed.data };
}

/**
 * False when the text cannot hold what findJsonProblem refuses, so the walk over every value of a status is
 * skipped (it was a third of the cost of taking a status in): a NUL reaches a parsed string or key only
 * through the escape `\u0000` and a key is `__proto__` only when the text has that word or a `\u` escape,
 * and the nesting depth is counted over the text's brackets outside strings. True sends the message
 * through findJsonProblem itself, which then decides and names the path: the same messages are refused.
 */
export function mayHoldJsonProblem(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  if (text.includes("\\u") || text.includes("__proto__")) return true;
  let level = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      // The root is level 1; an object or array at depth maxDepth (level maxDepth + 1) is refused.
      if (++level > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) level--;
  }
  return false;
}
