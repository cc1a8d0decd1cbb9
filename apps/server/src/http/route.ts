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
import { bitForMethod } from "../auth/permissions.ts";
import { ErrorBodySchema, OrgQuery } from "./schemas.ts";

/** `"user"`: a signed-in user acting on their own account (password, sessions, 2FA: auth/authorize-user.ts); a session, never a key; no organization. */
export type RouteAuth = "public" | "user" | RouteAuthorization;

/** What the security matrix reads from the OpenAPI document. */
export type TernAuthExtension =
  | { public: true }
  | { user: true }
  | { resource: string; permission: string; scope: "organization" | "account"; orgParam?: string; accountParam?: string };

const ERROR_TEXT: Partial<Record<ErrorCode, string>> = {
  VALIDATION_FAILED: "Invalid body, query or path parameter (VALIDATION_FAILED)",
  UNAUTHENTICATED: "Missing, invalid or expired token (UNAUTHENTICATED)",
  FORBIDDEN: "The caller lacks the permission bit for this resource (FORBIDDEN)",
  NOT_FOUND: "No such resource in the caller's organization (NOT_FOUND)",
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

export function defineRoute<const R extends RouteConfig & { auth: RouteAuth; errors?: ErrorCode[] }>(
  config: R,
): Omit<R, "auth" | "errors"> & { getRoutingPath(): string } {
  const { auth, errors = [], ...route } = config;
  const hasInput = Boolean(route.request?.body || route.request?.query || route.request?.params);
  const common: ErrorCode[] = [...(hasInput ? (["VALIDATION_FAILED"] as const) : []), ...errors, "INTERNAL"];

  if (auth === "public") {
    return createRoute({
      ...route,
      responses: { ...errorResponses(common), ...route.responses },
      security: [],
      "x-tern-auth": { public: true } satisfies TernAuthExtension,
    }) as never;
  }

  if (auth === "user") {
    return createRoute({
      ...route,
      responses: { ...errorResponses(["UNAUTHENTICATED", "FORBIDDEN", ...common]), ...route.responses },
      security: [{ bearerAuth: [] }],
      middleware: [authorizeUser()],
      "x-tern-auth": { user: true } satisfies TernAuthExtension,
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
  return createRoute({
    ...route,
    request: usesOrgQuery ? withOrgQuery(route.request) : route.request,
    responses: {
      ...errorResponses(["VALIDATION_FAILED", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", ...common]),
      ...route.responses,
    },
    security: [{ bearerAuth: [] }],
    middleware: [authorize(auth, route.method)],
    "x-tern-auth": extension,
  }) as never;
}
