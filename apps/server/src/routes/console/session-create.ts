import { authenticateConsoleCookie, setConsoleCookie } from "../../auth/console-cookie.ts";
import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { consoleSessionView, consoleSignIn } from "../../services/console/session.ts";
import { MfaChallengeSchema } from "../mfa/schemas.ts";
import { ConsoleSessionSchema, ConsoleSignInSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/console/session",
  operationId: "createConsoleSession",
  tags: ["console"],
  summary: "Sign the web console in: a session in an HttpOnly cookie instead of tokens",
  description:
    "Takes the body of POST /users/login (or, second step for a user with 2FA, the body of POST /users/login/mfa) and answers like them, except that the session goes into the `tern_console` cookie (HttpOnly, SameSite=Strict, Path=/, Secure over https) and the body says who signed in, their organizations and a `csrfToken`. Every /api route accepts the cookie; unsafe methods (POST, PUT, PATCH, DELETE) then need the header `X-CSRF-Token: <csrfToken>` (else 403 CSRF_FAILED). A user with 2FA first gets the `mfaRequired` challenge (200), exactly as from the login route.",
  auth: "public",
  errors: ["UNAUTHENTICATED", "MFA_PROOF_INVALID", "RATE_LIMITED"],
  request: { body: jsonBody(ConsoleSignInSchema) },
  responses: {
    200: {
      description: "Signed in (cookie set), or a second-factor challenge",
      content: { "application/json": { schema: ConsoleSessionSchema.or(MfaChallengeSchema) } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const result = await consoleSignIn(deps, c.req.valid("json"), {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    if ("challenge" in result) return c.json(result.challenge, 200);
    const user = await authenticateConsoleCookie(deps.db, result.refreshToken);
    if (!user) throw new ApiError("INTERNAL", "the new session was not found");
    setConsoleCookie(c, result.refreshToken);
    return c.json(await consoleSessionView(deps, user), 200);
  });
}
