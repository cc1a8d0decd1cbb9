import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { addSigningKey } from "../../services/agent-upgrades/keys.ts";
import { ACCOUNT_AUTH, AgentSigningKeyCreateSchema, AgentSigningKeySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/agent-signing-keys",
  operationId: "addAgentSigningKey",
  tags: ["agent-upgrades"],
  summary: "Register a public key agent packages may be signed with (account owners)",
  description:
    "The Ed25519 public key (32 bytes, base64) of a key pair the operator made with `tern agent-packages keygen`; the private key never reaches the server. Agents trust keys from their own settings (`upgrade-keys`), not from here. 409 CONFLICT when the key is registered already.",
  auth: ACCOUNT_AUTH,
  errors: ["CONFLICT"],
  request: { body: jsonBody(AgentSigningKeyCreateSchema) },
  responses: { 201: jsonResponse(AgentSigningKeySchema, "The registered key") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await addSigningKey(requestCtx(c), c.req.valid("json")), 201));
}
