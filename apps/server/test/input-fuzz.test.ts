/**
 * Malformed input against every operation of the OpenAPI document, generated
 * from it (so a route added later is covered without editing this file), with
 * a valid owner token: invalid JSON, missing bodies, wrong content types,
 * unknown fields, `__proto__` keys, NUL characters, deep nesting, huge values,
 * and property-based values (fast-check) shaped by each operation's own JSON
 * schema with wrong types mixed in. Every answer must be a 4xx (or, for a
 * generated value that happens to be valid, a 2xx) with the error body: never
 * a 5xx. The guaranteed-invalid inputs must be refused with a 4xx.
 */
import { ErrorBody } from "@tern/protocol";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Fixture, SECURITY_FIXTURES } from "./support/security-fixtures.ts";
import { type ApiResponse, type RequestOptions, useTestServer } from "./support/test-server.ts";

type JsonSchema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { required: boolean; schema: JsonSchema };
}

const t = useTestServer();
let operations: Operation[] = [];
let components: Record<string, JsonSchema> = {};
const fixtures = new Map<string, Fixture>();

beforeAll(async () => {
  const doc = (
    await t.api<{
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components?: { schemas?: Record<string, JsonSchema> };
    }>("GET", "/api/openapi.json")
  ).body;
  components = doc.components?.schemas ?? {};
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const body = op.requestBody as { required?: boolean; content?: Record<string, { schema: JsonSchema }> } | undefined;
      const schema = body?.content?.["application/json"]?.schema;
      return {
        method,
        path,
        parameters: (op.parameters as Parameter[] | undefined) ?? [],
        ...(schema ? { body: { required: body?.required === true, schema } } : {}),
      };
    }),
  );
  for (const op of operations) {
    if (!fixtures.has(op.path)) fixtures.set(op.path, (await SECURITY_FIXTURES[op.path]?.(t)) ?? { params: {} });
  }
}, 60_000);

function resolve(schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s.$ref === "string"; i++) s = components[s.$ref.replace("#/components/schemas/", "")] ?? {};
  return s;
}

/** A fast-check arbitrary of values shaped by a JSON schema (not necessarily valid: bounds and patterns are loose). */
function arbitraryOf(input: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(input);
  if (depth > 5) return fc.constant(null);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants?.length) return fc.oneof(...variants.map((v) => arbitraryOf(v, depth + 1)));
  if (Array.isArray(schema.allOf) && schema.allOf.length) return arbitraryOf(schema.allOf[0] as JsonSchema, depth + 1);
  const type = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  if (type.length > 1) return fc.oneof(...type.map((ty) => arbitraryOf({ ...schema, type: ty }, depth)));
  switch (type[0]) {
    case "string":
      if (schema.format === "uuid") return fc.uuid();
      if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format === "email") return fc.emailAddress();
      return fc.oneof(
        fc.string({ maxLength: Math.min(Number(schema.maxLength ?? 40), 40) }),
        // Any code unit: NUL, lone surrogates, controls (PostgreSQL refuses \u0000 in text).
        fc.string({ unit: "binary", maxLength: 20 }),
        fc.constant("a\u0000b"),
      );
    case "integer":
      return fc.integer({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 100_000) });
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(arbitraryOf((schema.items as JsonSchema) ?? {}, depth + 1), { maxLength: 3 });
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = arbitraryOf(v, depth + 1);
      return fc.record(model, { requiredKeys: required.filter((k) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the schema with one field, somewhere, given a value of the wrong type. */
function wrongTyped(schema: JsonSchema): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.string(),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
    fc.constant({ a: [1, { b: 2 }] }),
  );
  return fc.tuple(arbitraryOf(schema), wrong, fc.nat()).map(([value, bad, pick]) => {
    const holders: [Record<string, unknown> | unknown[], string | number][] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) {
        for (const [i, x] of v.entries()) {
          holders.push([v, i]);
          walk(x);
        }
      } else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          holders.push([v as Record<string, unknown>, k]);
          walk(x);
        }
      }
    };
    walk(value);
    if (holders.length === 0) return bad;
    const [holder, key] = holders[pick % holders.length]!;
    (holder as Record<string | number, unknown>)[key] = bad;
    return value;
  });
}

function pathOf(op: Operation, override?: string): string {
  const params = fixtures.get(op.path)?.params ?? {};
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(override ?? params[name] ?? crypto.randomUUID()));
}

async function send(op: Operation, options: RequestOptions & { path?: string } = {}): Promise<ApiResponse<unknown>> {
  return t.api(op.method.toUpperCase(), options.path ?? pathOf(op), { token: t.admin.token, ...options });
}

function label(op: Operation, what: string, res: ApiResponse<unknown>): string {
  return `${op.method.toUpperCase()} ${op.path} (${what}) → ${res.status} ${res.text.slice(0, 300)}`;
}

/** Never a 5xx; an error answer has the error body with a machine code. */
function expectNo5xx(op: Operation, what: string, res: ApiResponse<unknown>): void {
  expect(res.status, label(op, what, res)).toBeLessThan(500);
  if (res.status >= 400) expect(ErrorBody.safeParse(res.body).success, label(op, what, res)).toBe(true);
}

/** Refused: a 4xx with the error body; a 400 is VALIDATION_FAILED with details. */
function expectRefused(op: Operation, what: string, res: ApiResponse<unknown>): void {
  expectNo5xx(op, what, res);
  expect(res.status, label(op, what, res)).toBeGreaterThanOrEqual(400);
  const body = res.body as ErrorBody;
  if (res.status === 400) {
    expect(body.code, label(op, what, res)).toBe("VALIDATION_FAILED");
    expect(body.details.length, label(op, what, res)).toBeGreaterThan(0);
  }
}

/** Copies of `value`, each with "\u0000" appended to one of its strings. */
function withNulInEachString(value: unknown): unknown[] {
  const out: unknown[] = [];
  const visit = (v: unknown, set: (x: unknown) => void) => {
    if (typeof v === "string") {
      set(`${v}\u0000`);
      out.push(structuredClone(root));
      set(v);
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) visit(x, (y) => (v[i] = y));
    } else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) visit(x, (y) => ((v as Record<string, unknown>)[k] = y));
    }
  };
  const root = structuredClone(value);
  visit(root, () => {});
  return out;
}

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const withBody = () => operations.filter((op) => op.body);

describe("malformed input on every operation", () => {
  it("finds the operations and their inputs in the document", () => {
    expect(operations.length).toBeGreaterThanOrEqual(40);
    expect(withBody().length).toBeGreaterThanOrEqual(15);
  });

  it("bodies: invalid JSON, missing, wrong content type, __proto__, NUL, deep, huge, unknown fields → 4xx", async () => {
    let validationFailures = 0;
    for (const op of withBody()) {
      const cases: [string, RequestOptions][] = [
        ["invalid JSON", { raw: '{"a": [1, 2' }],
        ["a JSON string that is not the body's shape", { raw: '"x"' }],
        ["text/plain", { raw: "{}", headers: { "content-type": "text/plain" } }],
        ["no content type", { raw: '{"a":1}', headers: { "content-type": "" } }],
        ["__proto__ key", { raw: '{"__proto__": {"isAdmin": true}}' }],
        ["nested __proto__", { raw: '{"x": [{"__proto__": {"isAdmin": true}}]}' }],
        ["NUL in a string", { body: { name: "a\u0000b", description: "\u0000" } }],
        ["NUL in a key", { raw: '{"na\\u0000me": 1}' }],
        ["deeply nested", { raw: `{"a": ${deep(64)}}` }],
        ["10,000 levels", { raw: `{"a": ${deep(10_000)}}` }],
        ["huge string", { body: { name: "x".repeat(2_000_000) } }],
        ["unknown field", { body: { zzUnknownField: 1, __definitelyNot: "a field" } }],
      ];
      if (op.body!.required) cases.push(["empty body", { raw: "" }], ["no body", {}]);
      // A valid body (from the matrix's fixtures) with a NUL in each of its strings in turn: the database would refuse it.
      const valid = fixtures.get(op.path)?.bodies?.[op.method];
      for (const [i, poisoned] of withNulInEachString(valid).entries())
        cases.push([`NUL in valid body string ${i}`, { body: poisoned }]);
      for (const [what, options] of cases) {
        const res = await send(op, options);
        // A route that accepts unknown fields (what agents send) may refuse the rest with 401 etc.; still a 4xx.
        expectRefused(op, what, res);
        if (res.status === 400) validationFailures++;
      }
    }
    // Owners pass authorization, so nearly every refusal above is the input guard's.
    expect(validationFailures).toBeGreaterThan(withBody().length * 8);
  }, 120_000);

  it("query and path: unknown parameters, __proto__, NUL, huge values → 4xx", async () => {
    for (const op of operations) {
      const cases: [string, RequestOptions & { path?: string }][] = [
        ["unknown query parameter", { query: { zzUnknownParam: "1" } }],
        ["__proto__ query parameter", { path: `${pathOf(op)}?__proto__=1` }],
        ["constructor query parameter", { query: { constructor: "x" } }],
        [
          "NUL in a query value",
          { query: Object.fromEntries(op.parameters.filter((p) => p.in === "query").map((p) => [p.name, "a\u0000"])) },
        ],
      ];
      if (op.path.includes("{")) {
        cases.push(["NUL in a path parameter", { path: pathOf(op, "a\u0000b") }]);
        cases.push(["huge path parameter", { path: pathOf(op, "x".repeat(5000)) }]);
        cases.push(["__proto__ as path parameter", { path: pathOf(op, "__proto__") }]);
      }
      for (const [what, options] of cases) {
        if (what === "NUL in a query value" && Object.keys(options.query ?? {}).length === 0) continue;
        expectRefused(op, what, await send(op, options));
      }
    }
  }, 120_000);

  it("values generated from each operation's schemas, with wrong types and huge values mixed in, never get a 5xx", async () => {
    const huge = fc.oneof(
      fc.constant("x".repeat(100_000)),
      fc.constant(Number.MAX_SAFE_INTEGER),
      fc.constant(-1e308),
      fc.constant("😀\u202e\ud800"),
    );
    for (const op of operations) {
      // A DELETE that happens to get valid input would remove the fixtures the other operations use.
      if (op.method === "delete") continue;
      const query = op.parameters.filter((p) => p.in === "query");
      const queryArb = fc.record(
        Object.fromEntries(
          query.map((p) => [
            p.name,
            fc
              .oneof(arbitraryOf(p.schema ?? {}), fc.string({ maxLength: 20 }), huge)
              .map((v) => (typeof v === "string" ? v : JSON.stringify(v))),
          ]),
        ),
        { requiredKeys: [] },
      );
      const bodyArb = op.body
        ? fc.oneof(wrongTyped(op.body.schema), arbitraryOf(op.body.schema), fc.jsonValue({ maxDepth: 3 }), huge)
        : fc.constant(undefined);
      await fc.assert(
        fc.asyncProperty(queryArb, bodyArb, async (q, body) => {
          const res = await send(op, {
            query: q as Record<string, string>,
            ...(op.body ? { raw: JSON.stringify(body ?? null) } : {}),
          });
          expectNo5xx(op, `generated ${JSON.stringify({ q, body }).slice(0, 200)}`, res);
        }),
        { numRuns: 6, seed: 13, endOnFailure: true },
      );
    }
  }, 180_000);
});
