import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createInvitation } from "../../services/accounts/invitations.ts";
import { InvitationCreateSchema, InvitationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/invitations",
  operationId: "createInvitation",
  tags: ["members"],
  summary: "Invite an e-mail address to the organization (or its account) with a role",
  description:
    "E-mails a single-use token to the address; the person becomes a member when they accept (POST /invitations/accept). The answer is the same for every address: it never tells whether the address has a user. A new invitation replaces a pending one for the same address and scope. scope=account needs an account owner; inviting an owner needs the owner role. Needs SMTP (503 EMAIL_UNAVAILABLE without it or when the SMTP server refuses; the invitation is then withdrawn).",
  auth: { resource: "members" },
  errors: ["EMAIL_UNAVAILABLE"],
  request: { body: jsonBody(InvitationCreateSchema) },
  responses: { 201: jsonResponse(InvitationSchema, "The pending invitation") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createInvitation(requestCtx(c), c.req.valid("json")), 201));
}
