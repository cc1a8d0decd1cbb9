/**
 * The API sub-app (every route, mounted at /api) and the OpenAPI 3.1 document
 * generated from the same route declarations. The document needs no database:
 * `npm run openapi` writes it to apps/server/openapi.json.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { registerRoutes } from "../routes/registry.ts";
import { API_VERSION, PROTOCOL_VERSION, SERVER_VERSION } from "../version.ts";
import type { AppEnv } from "./env.ts";
import { validationHook } from "./errors.ts";

export const API_BASE = "/api";

export function createApi(): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description:
      "An access JWT from POST /api/users/login (valid for minutes; renew with /api/users/refresh) or an access token (tern_at_…) from POST /api/accesstokens.",
  });
  registerRoutes(api);
  return api;
}

export type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/** The document of an app that has `api` mounted at /api. */
export function openApiDocument(root: OpenAPIHono<AppEnv>): OpenApiDocument {
  return root.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Tern management API",
      version: `${SERVER_VERSION} (api ${API_VERSION}, device protocol ${PROTOCOL_VERSION})`,
      description: [
        "REST API of the Tern SD-WAN management server.",
        "",
        "Every non-public route acts in one organization: `?org=<id>` or the caller's default. Permissions are per resource with bits get=1 post=2 put=4 del=8; a route needs the bit of its method (see `x-tern-auth`). Routes under /users/me (`x-tern-auth: {user: true}`) act on the signed-in user themself: a login session, never an access token, no organization.",
        "Lists take `offset`, `limit` (≤ 1000), `sort`/`order` (aliases `sortField`/`sortOrder`) and `filter` (alias `filters`), a JSON array of `{key, op, val}` with ops `== != contains !contains < > <= >= in`; the total is in the `records-total` header.",
        "Every error is `{error, code, details[]}` with a machine `code`.",
        "Bodies are JSON (`Content-Type: application/json`, at most TERN_MAX_BODY_BYTES, nested at most 32 levels, no NUL characters). A body field or query parameter the operation does not declare is refused: 400 VALIDATION_FAILED `unknown field maxLossPct; did you mean maxLossPercent?`.",
        "Rate limit per access token and per client address: every answer carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and `RateLimit-Policy`; over the limit 429 RATE_LIMITED with `Retry-After`.",
      ].join("\n"),
    },
  });
}

/** The document alone, without a database (for the committed openapi.json). */
export function buildOpenApiDocument(): OpenApiDocument {
  const root = new OpenAPIHono<AppEnv>();
  root.route(API_BASE, createApi());
  return openApiDocument(root);
}
