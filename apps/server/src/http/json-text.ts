/**
 * A 200 answer whose body is JSON text the server already holds (a list page
 * the database built as JSON): sent as it is, with the header `c.json` sets.
 * Typed as the route's JSON answer, which the text is (the route's tests
 * compare it with the objects the other path builds).
 */
import type { Context } from "hono";

export function jsonText(c: Context, json: string) {
  return c.body(json, 200, { "content-type": "application/json" }) as never;
}
