/**
 * GET /metrics in the Prometheus text format, outside /api (it is not part of
 * the REST API or its OpenAPI document). With TERN_METRICS_TOKEN set it needs
 * `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError, errorResponse } from "../http/errors.ts";

export const METRICS_PATH = "/metrics";

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function mountMetrics(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.get(METRICS_PATH, async (c) => {
    const expected = deps.config.TERN_METRICS_TOKEN;
    if (expected) {
      const given = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
      if (!sameSecret(given, expected)) {
        return errorResponse(
          c,
          new ApiError("UNAUTHENTICATED", "metrics need Authorization: Bearer <TERN_METRICS_TOKEN>", [], {
            "www-authenticate": "Bearer",
          }),
        );
      }
    }
    const body = await deps.metrics.registry.metrics();
    return c.body(body, 200, { "content-type": deps.metrics.registry.contentType });
  });
}
