/**
 * The input guard every route gets from defineRoute, before its zod
 * validators: the shared JSON body parser (json-body.ts), NUL characters in
 * query and path parameters, and unknown fields in the body and the query
 * (zod would strip them silently). A route declared later is covered without
 * opting in.
 */
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { validationFailed } from "../errors.ts";
import { checkJsonValue, readJsonBody } from "./json-body.ts";
import { findUnknownFields, type UnknownField, unknownFieldMessage } from "./unknown-fields.ts";

export interface GuardedInput {
  body?: { schema: z.ZodType; required: boolean };
  query?: z.ZodType;
  /**
   * The resource as GET returns it, for an update that takes back what GET
   * answered: the fields only this schema knows (ids, timestamps, read-only
   * state) are accepted and ignored; anything neither knows is refused.
   */
  readOnly?: z.ZodType;
  /**
   * Accept fields the schema does not know (they are dropped). Only for what
   * agents send (a newer agent must still register with an older server).
   */
  allowUnknownFields?: boolean;
}

const NO_PARAMETERS = z.object({});

const fieldKey = (f: UnknownField) => JSON.stringify([...f.path, f.key]);

function refuseUnknown(where: string, schema: z.ZodType, value: unknown, readOnly?: z.ZodType): void {
  let unknown = findUnknownFields(schema, value);
  if (unknown.length && readOnly) {
    const alsoUnknown = new Set(findUnknownFields(readOnly, value).map(fieldKey));
    unknown = unknown.filter((f) => alsoUnknown.has(fieldKey(f)));
  }
  if (unknown.length === 0) return;
  const details = unknown.slice(0, 20).map((f) => ({ path: [...f.path, f.key].join("."), message: unknownFieldMessage(f) }));
  const first = details[0]!.message;
  throw validationFailed(
    unknown.length === 1 ? `invalid ${where}: ${first}` : `invalid ${where}: ${unknown.length} unknown fields`,
    details,
  );
}

export function inputGuard(input: GuardedInput): MiddlewareHandler {
  return async (c, next) => {
    const params = c.req.param() as Record<string, string>;
    for (const [name, value] of Object.entries(params)) checkJsonValue(value, name);

    const search = new URL(c.req.url).searchParams;
    // No prototype: a `__proto__` parameter is a plain (unknown) key here, never a setter.
    const query: Record<string, string> = Object.create(null);
    for (const [name, value] of search) {
      checkJsonValue(name, "query");
      if (name === "__proto__")
        throw validationFailed("query parameter __proto__ is not allowed", [{ path: name, message: "not allowed" }]);
      checkJsonValue(value, name);
      query[name] = value;
    }
    // A route without a query schema takes no query parameters at all.
    if (!input.allowUnknownFields) refuseUnknown("query", input.query ?? NO_PARAMETERS, query);

    if (input.body) {
      const body = await readJsonBody(c, input.body.required);
      if (body.present && !input.allowUnknownFields) refuseUnknown("body", input.body.schema, body.value, input.readOnly);
    }
    await next();
  };
}
