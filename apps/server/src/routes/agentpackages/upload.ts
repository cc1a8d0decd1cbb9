import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { parseSignatureHeaders, uploadAgentPackage } from "../../services/agent-upgrades/packages.ts";
import { ACCOUNT_AUTH, AgentPackageSchema } from "./schemas.ts";

export const UPLOAD_PATH = "/agent-packages";

export const route = defineRoute({
  method: "post",
  path: UPLOAD_PATH,
  operationId: "uploadAgentPackage",
  tags: ["agent-upgrades"],
  summary: "Upload a signed agent package (account owners)",
  description:
    "The package (`tern agent-packages sign` makes it and its signature file; docs/upgrades.md) as the raw body with `Content-Type: application/octet-stream`, at most TERN_AGENT_PACKAGE_MAX_BYTES (413 PAYLOAD_TOO_LARGE), and the signature file's fields as headers. The server recomputes the SHA-256 (400 PACKAGE_CHECKSUM_MISMATCH) and verifies the Ed25519 signature of version and checksum with the named key, which must be registered on the account (POST /agent-signing-keys; 400 PACKAGE_SIGNATURE_INVALID). One package per version (409 PACKAGE_VERSION_EXISTS).",
  auth: ACCOUNT_AUTH,
  errors: ["UNSUPPORTED_MEDIA_TYPE", "PACKAGE_CHECKSUM_MISMATCH", "PACKAGE_SIGNATURE_INVALID", "PACKAGE_VERSION_EXISTS"],
  request: {
    headers: z.object({
      "x-tern-package-version": z.string().meta({ description: "The package's version (as signed)" }),
      "x-tern-package-sha256": z.string().meta({ description: "Hex SHA-256 of the body (as signed)" }),
      "x-tern-package-signature": z.string().meta({ description: "Ed25519 signature, base64" }),
      "x-tern-package-public-key": z.string().meta({ description: "The signing key's public key (32 bytes, base64)" }),
    }),
    body: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
  },
  responses: { 201: jsonResponse(AgentPackageSchema, "The stored package") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    if ((c.req.header("content-type") ?? "").split(";")[0]?.trim() !== "application/octet-stream")
      throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "the package must be sent as application/octet-stream");
    const sig = parseSignatureHeaders({
      version: c.req.header("x-tern-package-version"),
      sha256: c.req.header("x-tern-package-sha256"),
      signature: c.req.header("x-tern-package-signature"),
      publicKey: c.req.header("x-tern-package-public-key"),
    });
    const content = Buffer.from(await c.req.arrayBuffer());
    return c.json(await uploadAgentPackage(requestCtx(c), sig, content), 201);
  });
}
