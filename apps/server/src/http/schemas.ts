/**
 * Shared schemas of the OpenAPI document, named once. Protocol schemas are
 * plain zod; `.openapi("Name")` (added to zod by @hono/zod-openapi) makes each
 * a named component. Resource schemas live beside their routes
 * (routes/<resource>/schemas.ts).
 */

import { z } from "@hono/zod-openapi";
import { ErrorBody, Id, JobsQueued } from "@tern/protocol";

export const ErrorBodySchema = ErrorBody.openapi("ErrorBody");
export const JobsQueuedSchema = JobsQueued.openapi("JobsQueued");

/** `{id}` in a path. */
export const IdParams = z.object({
  id: Id.openapi({ param: { name: "id", in: "path" }, description: "Resource id (UUID)" }),
});

/** `?org=` on every organization-scoped route. */
export const OrgQuery = z.object({
  org: Id.optional().openapi({
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
