/**
 * The one JSON body parser of every route (run by the input guard before the
 * route's validator): a body must be JSON with a JSON Content-Type, present
 * when the route requires one, not nested deeper than MAX_JSON_DEPTH, and
 * without NUL characters or `__proto__` keys. Each refusal is a 400
 * VALIDATION_FAILED naming where, never a 500 from JSON.parse or the database
 * (PostgreSQL refuses \u0000 in text).
 */
import type { Context } from "hono";
import { validationFailed } from "../errors.ts";

/** Deepest nesting of objects and arrays a body may have; real bodies stay under 8. */
export const MAX_JSON_DEPTH = 32;

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

export type JsonBody = { present: false } | { present: true; value: unknown };

const refuse = (path: string, message: string) => validationFailed(message, [{ path, message }]);

/** Reads and checks the body. Body-limit errors (413) pass through untouched. */
export async function readJsonBody(c: Context, required: boolean): Promise<JsonBody> {
  const contentType = c.req.header("content-type");
  const text = await c.req.text();
  if (text.trim() === "") {
    if (required) throw refuse("body", "a JSON body is required (Content-Type: application/json)");
    return { present: false };
  }
  if (!contentType || !JSON_TYPE.test(contentType)) {
    throw refuse(
      "body",
      `the body must be JSON with Content-Type: application/json (got ${contentType ? contentType.slice(0, 100) : "none"})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw refuse("body", `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  checkJsonValue(value, "body");
  return { present: true, value };
}

/** What is wrong with a parsed JSON value (too deep, a NUL, a `__proto__` key), or null. */
export interface JsonProblem {
  /** Dotted path, or "" for the value itself. */
  path: string;
  message: string;
}

/**
 * Depth, NUL characters and `__proto__` keys, iteratively so a hostile value
 * cannot overflow the stack. Shared with the device gateway's frame parser.
 */
export function findJsonProblem(root: unknown, maxDepth = MAX_JSON_DEPTH): JsonProblem | null {
  // Each entry points at its parent, so the path is only built for the one value that has a problem.
  type Entry = { value: unknown; depth: number; key: string | number | null; parent: Entry | null };
  const pathOf = (entry: Entry, extra?: string) => {
    const parts: (string | number)[] = extra === undefined ? [] : [extra];
    for (let e: Entry | null = entry; e && e.key !== null; e = e.parent) parts.unshift(e.key);
    return parts.join(".");
  };
  const stack: Entry[] = [{ value: root, depth: 0, key: null, parent: null }];
  while (stack.length) {
    const entry = stack.pop()!;
    const { value, depth } = entry;
    if (typeof value === "string") {
      if (value.includes("\u0000")) return { path: pathOf(entry), message: "must not contain a NUL character (\\u0000)" };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= maxDepth) return { path: pathOf(entry), message: `nested deeper than ${maxDepth} levels` };
    const push = (v: unknown, key: string | number) => {
      // Numbers, booleans and null cannot hold a problem: not worth a stack entry.
      if (typeof v === "string" || (v !== null && typeof v === "object"))
        stack.push({ value: v, depth: depth + 1, key, parent: entry });
    };
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) push(v, i);
      continue;
    }
    for (const [key, v] of Object.entries(value as object)) {
      if (key === "__proto__") return { path: pathOf(entry, key), message: "field __proto__ is not allowed" };
      if (key.includes("\u0000"))
        return { path: pathOf(entry), message: "a field name must not contain a NUL character (\\u0000)" };
      push(v, key);
    }
  }
  return null;
}

/** findJsonProblem as a 400 naming where; `where` names the input when the problem is the value itself. */
export function checkJsonValue(root: unknown, where: string): void {
  const problem = findJsonProblem(root);
  if (problem) throw refuse(problem.path || where, problem.message);
}
