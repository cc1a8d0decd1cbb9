/**
 * GET /metrics in the Prometheus text format, outside /api (it is not part of
 * the REST API or its OpenAPI document). With TERN_METRICS_TOKEN set it needs
 * `Authorization: Bearer <token>`; without, it answers only clients connected
 * from a loopback address with no proxy headers (a reverse proxy on the same
 * host would otherwise make every client look local).
 */
import { timingSafeEqual } from "node:crypto";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError, errorResponse } from "../http/errors.ts";

export const METRICS_PATH = "/metrics";

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const PROXY_HEADERS = ["x-forwarded-for", "forwarded", "x-real-ip"];

/** A client on this host talking to the socket itself (not through a proxy). */
function directLoopbackClient(c: Context): boolean {
  if (PROXY_HEADERS.some((h) => c.req.header(h) !== undefined)) return false;
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    return false;
  }
  return !!address && (/^127\./.test(address) || address === "::1" || /^::ffff:127\./i.test(address));
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
    } else if (!directLoopbackClient(c)) {
      return errorResponse(
        c,
        new ApiError(
          "FORBIDDEN",
          "metrics are served to loopback clients only; set TERN_METRICS_TOKEN to scrape them from elsewhere",
        ),
      );
    }
    const body = await deps.metrics.registry.metrics();
    return c.body(body, 200, { "content-type": deps.metrics.registry.contentType });
  });
}
