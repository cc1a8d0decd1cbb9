import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { notFound } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { getLogo } from "../../services/branding/branding.ts";

const LogoQuery = z.object({
  v: z
    .string()
    .regex(/^\d{1,9}$/)
    .optional()
    .meta({
      param: { name: "v", in: "query" },
      description: "The logo's version (from logoUrl): with it the answer is cached for a year",
    }),
});

/** Even a sanitized SVG is served as an inert image: no scripts, no outside requests, sandboxed if opened directly. */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

export const route = defineRoute({
  method: "get",
  path: "/branding/logo",
  operationId: "getBrandingLogo",
  tags: ["branding"],
  summary: "The logo image",
  description:
    "Public. PNG or (sanitized) SVG, with `X-Content-Type-Options: nosniff` and a CSP that allows nothing to run. With the current `?v=` (as in logoUrl) it may be cached for a year; without, it is revalidated. 404 when there is no logo.",
  auth: "public",
  errors: ["NOT_FOUND"],
  request: { query: LogoQuery },
  responses: {
    200: {
      description: "The logo",
      content: {
        "image/png": { schema: { type: "string", format: "binary" } },
        "image/svg+xml": { schema: { type: "string", format: "binary" } },
      },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const logo = await getLogo(c.get("deps").db);
    if (!logo) throw notFound("logo");
    const current = c.req.valid("query").v === String(logo.version);
    return c.body(new Uint8Array(logo.bytes), 200, {
      "content-type": logo.type,
      "x-content-type-options": "nosniff",
      "content-security-policy": LOGO_CSP,
      "cache-control": current ? "public, max-age=31536000, immutable" : "no-cache",
    }) as never;
  });
}
