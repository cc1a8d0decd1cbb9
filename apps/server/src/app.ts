/**
 * Builds the HTTP app from its dependencies; main.ts listens, tests call
 * app.request() without a port.
 */
import { getConnInfo } from "@hono/node-server/conninfo";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import type { AppDeps } from "./deps.ts";
import { defaultConsoleDir } from "./http/console/console-dir.ts";
import { mountConsole } from "./http/console/serve-console.ts";
import { mountDocsPage } from "./http/docs-ui/docs-page.ts";
import type { AppEnv } from "./http/env.ts";
import { ApiError, errorResponse, handleError } from "./http/errors.ts";
import { API_BASE, createApi, openApiDocument } from "./http/openapi.ts";
import { apiRateLimit } from "./http/rate-limit/api-rate-limit.ts";
import { corsFor, securityHeaders } from "./http/security-headers.ts";
import { METRICS_PATH, mountMetrics } from "./metrics/route.ts";
import { UPLOAD_PATH as PACKAGE_UPLOAD_PATH } from "./routes/agentpackages/upload.ts";

function clientIp(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
    if (forwarded) return forwarded;
  }
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    // app.request() in tests has no socket.
    return "unknown";
  }
}

export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.use("*", requestId());
  app.use("*", async (c, next) => {
    const started = performance.now();
    const logger = deps.logger.child({ reqId: c.get("requestId") });
    c.set("deps", deps);
    c.set("logger", logger);
    c.set("clientIp", clientIp(c, deps.config.TERN_TRUST_PROXY));
    await next();
    const entry = { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) };
    if (c.req.path === `${API_BASE}/health` || c.req.path === METRICS_PATH) c.get("logger").debug(entry, "request");
    else c.get("logger").info(entry, "request");
  });
  app.use("*", securityHeaders());
  const cors = corsFor(deps.config.TERN_CORS_ORIGINS);
  if (cors) app.use(`${API_BASE}/*`, cors);
  const rateLimit = apiRateLimit({
    perToken: deps.config.TERN_API_RATE_TOKEN,
    perAddress: deps.config.TERN_API_RATE_ADDRESS,
    windowSeconds: deps.config.TERN_API_RATE_WINDOW,
  });
  // Health checks of load balancers poll often from one address: not counted.
  app.use(`${API_BASE}/*`, (c, next) => (c.req.path === `${API_BASE}/health` ? next() : rateLimit(c, next)));
  const tooLarge = (limit: number) => (c: Context) => {
    const res = errorResponse(c, new ApiError("PAYLOAD_TOO_LARGE", `request body larger than ${limit} bytes`));
    // The rest of the refused body is never read: say the connection ends here, so the client opens a new one
    // instead of sending its next request into a socket that is being torn down.
    res.headers.set("connection", "close");
    return res;
  };
  const bodyLimitOf = (maxSize: number) => bodyLimit({ maxSize, onError: tooLarge(maxSize) });
  const apiBodyLimit = bodyLimitOf(deps.config.TERN_MAX_BODY_BYTES);
  // Agent packages are the one body larger than JSON's limit: they get theirs (TERN_AGENT_PACKAGE_MAX_BYTES).
  const packageBodyLimit = bodyLimitOf(deps.config.TERN_AGENT_PACKAGE_MAX_BYTES);
  const packageUpload = `${API_BASE}${PACKAGE_UPLOAD_PATH}`;
  // A GET or HEAD has no body (@hono/node-server never reads one), and the limit's look at it would build the
  // request's whole Fetch API Request (headers, abort signal) for nothing: most of the API's requests are GETs.
  app.use(`${API_BASE}/*`, (c, next) =>
    c.req.method === "GET" || c.req.method === "HEAD"
      ? next()
      : c.req.method === "POST" && c.req.path === packageUpload
        ? packageBodyLimit(c, next)
        : apiBodyLimit(c, next),
  );

  app.route(API_BASE, createApi());

  const document = openApiDocument(app);
  app.get(`${API_BASE}/openapi.json`, (c) => c.json(document));
  mountDocsPage(app as never, `${API_BASE}/docs`, `${API_BASE}/openapi.json`);
  mountMetrics(app, deps);
  mountConsole(app as never, deps.config.TERN_CONSOLE_DIR ?? defaultConsoleDir(), deps.logger);

  app.notFound((c) => errorResponse(c, new ApiError("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError(handleError);
  return app;
}
