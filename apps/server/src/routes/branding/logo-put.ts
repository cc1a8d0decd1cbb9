import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { setLogo } from "../../services/branding/branding.ts";
import { LOGO_MAX_BYTES, logoTypeOf, prepareLogo } from "../../services/branding/logo-file.ts";
import { BrandingSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/branding/logo",
  operationId: "uploadBrandingLogo",
  tags: ["branding"],
  summary: "Upload the logo: a PNG or an SVG of at most 256 KiB (installation administrators)",
  description:
    "The raw file as the body with `Content-Type: image/png` or `image/svg+xml`. A PNG must carry the PNG signature; an SVG is sanitized (scripts, event handlers, foreign objects, external references and styles removed; DOMPurify) and stored as what is left. 415 UNSUPPORTED_MEDIA_TYPE for another type or content that is not what the type says, 413 PAYLOAD_TOO_LARGE over 256 KiB, 400 VALIDATION_FAILED for an empty body.",
  auth: "installation",
  errors: ["UNSUPPORTED_MEDIA_TYPE"],
  request: {
    body: {
      required: true,
      content: {
        "image/png": { schema: { type: "string", format: "binary" } },
        "image/svg+xml": { schema: { type: "string", format: "binary" } },
      },
    },
  },
  responses: { 200: jsonResponse(BrandingSchema, "The branding with the new logo's URL") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const type = logoTypeOf(c.req.header("content-type"));
    if (!type) throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "the logo must be image/png or image/svg+xml");
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > LOGO_MAX_BYTES)
      throw new ApiError("PAYLOAD_TOO_LARGE", `the logo is larger than ${LOGO_MAX_BYTES / 1024} KiB`);
    const bytes = prepareLogo(Buffer.from(await c.req.arrayBuffer()), type);
    return c.json(await setLogo(c.get("deps").db, { bytes, type }), 200);
  });
}
