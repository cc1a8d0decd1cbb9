/**
 * Shared schemas of the OpenAPI document, named once. Protocol schemas are
 * plain zod 4 schemas: zod's own `.meta({ id: "Name" })` makes one a named
 * component of the document (do not use `.openapi()`: that method exists only
 * on schemas created after @hono/zod-openapi was loaded, which the protocol's
 * are not guaranteed to be). `.meta({ param, description })` documents a
 * parameter. Resource schemas live beside their routes (routes/<resource>/schemas.ts).
 */

import { z } from "@hono/zod-openapi";
import { ErrorBody, Id, JobsQueued } from "@tern/protocol";

export const ErrorBodySchema = ErrorBody.meta({ id: "ErrorBody" });
export const JobsQueuedSchema = JobsQueued.meta({ id: "JobsQueued" });

/** `{id}` in a path. */
export const IdParams = z.object({
  id: Id.meta({ param: { name: "id", in: "path" }, description: "Resource id (UUID)" }),
});

/** `?org=` on every organization-scoped route. */
export const OrgQuery = z.object({
  org: Id.optional().meta({
    param: { name: "org", in: "query" },
    description: "Organization to act in; default: the caller's default organization (a key: its own)",
  }),
});

/** A JSON request body; `required` so a body-less request is a validation error, not an empty object. */
export function jsonBody<T extends z.ZodType>(schema: T, description = "") {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}

/** A JSON response. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}
