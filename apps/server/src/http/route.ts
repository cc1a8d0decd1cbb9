/**
 * defineRoute: the one way to declare an API route. Besides what createRoute
 * takes, every route states `auth`: either `"public"` or the permission
 * resource it acts on (see RouteAuthorization). From that it gets the
 * authorization middleware (bit = method: get 1, post 2, put 4, del 8), the
 * `org` query parameter, the bearer security requirement, the shared error
 * responses, and an `x-tern-auth` extension that the security matrix test
 * reads to cover every route, including routes added later.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { ErrorCode } from "@tern/protocol";
import { errorStatus } from "@tern/protocol";
import { z } from "zod";
import { authorize, type RouteAuthorization } from "../auth/authorize.ts";
import { authorizeUser } from "../auth/authorize-user.ts";
import { authorizeInstallationAdmin } from "../auth/installation-admin.ts";
import { bitForMethod } from "../auth/permissions.ts";
import { inputGuard } from "./input/guard.ts";
import { ErrorBodySchema, OrgQuery } from "./schemas.ts";

/**
 * `"user"`: a signed-in user acting on their own account (password, sessions, 2FA: auth/authorize-user.ts); a session, never a key; no organization.
 * `"installation"`: installation-wide settings (branding), for installation administrators only (auth/installation-admin.ts).
 */
export type RouteAuth = "public" | "user" | "installation" | RouteAuthorization;

/** What the security matrix reads from the OpenAPI document. */
export type TernAuthExtension =
  | { public: true }
  | { user: true }
  | { installation: true }
  | { resource: string; permission: string; scope: "organization" | "account"; orgParam?: string; accountParam?: string };

const ERROR_TEXT: Partial<Record<ErrorCode, string>> = {
  VALIDATION_FAILED: "Invalid body, query or path parameter (VALIDATION_FAILED)",
  UNAUTHENTICATED: "Missing, invalid or expired token (UNAUTHENTICATED)",
  FORBIDDEN: "The caller lacks the permission bit for this resource (FORBIDDEN)",
  NOT_FOUND: "No such resource in the caller's organization (NOT_FOUND)",
  PAYLOAD_TOO_LARGE: "Request body larger than TERN_MAX_BODY_BYTES (PAYLOAD_TOO_LARGE)",
  RATE_LIMITED: "Too many requests for this token or address; see Retry-After (RATE_LIMITED)",
  INTERNAL: "Unexpected server error (INTERNAL)",
};

function errorResponses(codes: ErrorCode[]) {
  const out: Record<number, { description: string; content: { "application/json": { schema: typeof ErrorBodySchema } } }> = {};
  for (const code of new Set(codes)) {
    const status = errorStatus[code];
    const text = ERROR_TEXT[code] ?? code;
    const existing = out[status];
    out[status] = {
      description: existing ? `${existing.description}; ${text}` : text,
      content: { "application/json": { schema: ErrorBodySchema } },
    };
  }
  return out;
}

/** Adds `org` to the query schema (or creates one). */
function withOrgQuery(request: RouteConfig["request"]): RouteConfig["request"] {
  const query = request?.query;
  if (query && !(query instanceof z.ZodObject)) throw new Error("route query schemas must be z.object(...)");
  return { ...request, query: query ? (query as z.ZodObject).extend(OrgQuery.shape) : OrgQuery };
}

/** The input guard of a route: its JSON body schema and final query schema. */
function guardFor(request: RouteConfig["request"], options: Pick<RouteOptions, "allowUnknownFields" | "readOnlyFieldsOf">) {
  const body = request?.body;
  const schema = (body?.content?.["application/json"] as { schema?: unknown } | undefined)?.schema;
  return inputGuard({
    ...(schema ? { body: { schema: schema as z.ZodType, required: body?.required === true } } : {}),
    ...(request?.query ? { query: request.query as z.ZodType } : {}),
    allowUnknownFields: options.allowUnknownFields === true,
    ...(options.readOnlyFieldsOf ? { readOnly: options.readOnlyFieldsOf } : {}),
  });
}

export interface RouteOptions {
  auth: RouteAuth;
  errors?: ErrorCode[];
  /**
   * Drop body and query fields the schema does not know instead of refusing
   * them (400 VALIDATION_FAILED "unknown field …"). Only for what agents send,
   * so a newer agent still works with an older server.
   */
  allowUnknownFields?: boolean;
  /**
   * The resource schema GET answers, when this update takes it back whole:
   * its read-only fields are accepted and ignored, fields neither knows refused.
   */
  readOnlyFieldsOf?: z.ZodType;
}

export function defineRoute<const R extends RouteConfig & RouteOptions>(
  config: R,
): Omit<R, "auth" | "errors" | "allowUnknownFields" | "readOnlyFieldsOf"> & { getRoutingPath(): string } {
  const { auth, errors = [], allowUnknownFields, readOnlyFieldsOf, ...route } = config;
  const guardOptions = { allowUnknownFields, readOnlyFieldsOf };
  // Every route can be refused by the body parser (400, 413) and the API-wide rate limit (429).
  const common: ErrorCode[] = ["VALIDATION_FAILED", "PAYLOAD_TOO_LARGE", ...errors, "RATE_LIMITED", "INTERNAL"];

  if (auth === "public") {
    return createRoute({
      ...route,
      responses: { ...errorResponses(common), ...route.responses },
      security: [],
      middleware: [guardFor(route.request, guardOptions)],
      "x-tern-auth": { public: true } satisfies TernAuthExtension,
    }) as never;
  }

  if (auth === "user") {
    return createRoute({
      ...route,
      responses: { ...errorResponses(["UNAUTHENTICATED", "FORBIDDEN", ...common]), ...route.responses },
      security: [{ bearerAuth: [] }],
      middleware: [authorizeUser(), guardFor(route.request, guardOptions)],
      "x-tern-auth": { user: true } satisfies TernAuthExtension,
    }) as never;
  }

  if (auth === "installation") {
    return createRoute({
      ...route,
      responses: { ...errorResponses(["UNAUTHENTICATED", "FORBIDDEN", ...common]), ...route.responses },
      security: [{ bearerAuth: [] }],
      middleware: [authorizeInstallationAdmin(), guardFor(route.request, guardOptions)],
      "x-tern-auth": { installation: true } satisfies TernAuthExtension,
    }) as never;
  }

  const scope = auth.scope ?? "organization";
  const usesOrgQuery = !auth.orgParam && !auth.accountParam;
  const extension: TernAuthExtension = {
    resource: auth.resource,
    permission: auth.permission ?? bitForMethod(route.method),
    scope,
    ...(auth.orgParam ? { orgParam: auth.orgParam } : {}),
    ...(auth.accountParam ? { accountParam: auth.accountParam } : {}),
  };
  const request = usesOrgQuery ? withOrgQuery(route.request) : route.request;
  return createRoute({
    ...route,
    request,
    responses: {
      ...errorResponses(["VALIDATION_FAILED", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", ...common]),
      ...route.responses,
    },
    security: [{ bearerAuth: [] }],
    // Authorization first: a caller without access learns nothing about the input rules.
    middleware: [authorize(auth, route.method), guardFor(request, guardOptions)],
    "x-tern-auth": extension,
  }) as never;
}
