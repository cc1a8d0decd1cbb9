/**
 * parseInbound skips findJsonProblem's walk when the text cannot hold what it
 * refuses (mayHoldJsonProblem). The same messages must be refused with the
 * same reasons: every case here is checked against findJsonProblem itself
 * (the oracle), on a real status and on variants built to hide a NUL, a
 * `__proto__` key or a deep nesting where a text check could miss them.
 */
import { describe, expect, it } from "vitest";
import { statusMessage } from "../../../../test-harness/src/bench/payload.ts";
import { mayHoldJsonProblem, parseInbound } from "../../src/gateway/inbound.ts";
import { findJsonProblem, MAX_JSON_DEPTH } from "../../src/http/input/json-body.ts";

const nest = (levels: number, inner: unknown = 1): unknown => {
  let v = inner;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { x: v };
  return v;
};

function variants(): string[] {
  const status = statusMessage(4);
  const text = JSON.stringify(status);
  const out = [text];
  // NUL characters (JSON writes them as the escape), in values and keys.
  out.push(JSON.stringify({ ...status, appliedHash: "a\u0000b" }));
  out.push(text.replace('"status"', '"stat\\u0000us"'));
  out.push(JSON.stringify({ ...status, extra: { "k\u0000": 1 } }));
  // __proto__ keys: literal, and spelled with escapes JSON.parse decodes.
  out.push(text.replace("{", '{"__proto__":{"x":1},'));
  out.push(text.replace("{", '{"\\u005f_proto__":{"x":1},'));
  out.push(text.replace("{", '{"__pro\\u0074o__":1,'));
  // Harmless look-alikes: an escaped backslash before "u0000", brackets and quotes inside strings.
  out.push(JSON.stringify({ ...status, appliedHash: "\\u0000" }));
  out.push(JSON.stringify({ ...status, appliedHash: '{[{["]}' }));
  out.push(JSON.stringify({ ...status, appliedHash: "proto__proto" }));
  // Nesting around the limit, in an unknown field (zod does not look at it) and as the message itself.
  for (const levels of [MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 5]) {
    out.push(JSON.stringify({ ...status, extra: nest(levels) }));
    out.push(JSON.stringify({ ...status, extra: nest(levels, {}) }));
    out.push(JSON.stringify({ ...status, extra: nest(levels, []) }));
    out.push(JSON.stringify({ ...status, extra: nest(levels, 'a"]]]]\\') }));
    out.push(JSON.stringify(nest(levels)));
  }
  return out;
}

describe("parseInbound's fast path", () => {
  it("passes a message to findJsonProblem whenever findJsonProblem would refuse it", () => {
    let refused = 0;
    for (const text of variants()) {
      const oracle = findJsonProblem(JSON.parse(text));
      if (oracle) {
        refused++;
        expect(mayHoldJsonProblem(text), text.slice(0, 120)).toBe(true);
      }
    }
    // The corpus does hold problems of each kind (NUL ×3, __proto__ ×3, depth ×16).
    expect(refused).toBe(22);
  });

  it("refuses the same messages with the same reason as the full check", () => {
    for (const text of variants()) {
      const oracle = findJsonProblem(JSON.parse(text));
      const parsed = parseInbound(Buffer.from(text), false);
      if (oracle) {
        expect(parsed, text.slice(0, 120)).toEqual({
          ok: false,
          kind: "invalid",
          code: "VALIDATION_FAILED",
          message: `invalid message: ${oracle.path || "(message)"}: ${oracle.message}`,
        });
      } else if (!parsed.ok) {
        // Refused by the schema, never by the JSON check.
        expect(parsed.message).toMatch(/^invalid message \(type|^invalid message: /);
        expect(parsed.message).not.toMatch(/NUL|__proto__|nested deeper/);
      }
    }
  });

  it("takes a plain status without the walk", () => {
    const text = JSON.stringify(statusMessage(4));
    expect(mayHoldJsonProblem(text)).toBe(false);
    expect(parseInbound(Buffer.from(text), false)).toMatchObject({ ok: true, message: { type: "status" } });
  });
});
