import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getMfaStatus } from "../../services/mfa/index.ts";
import { MfaStatusSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/users/me/mfa",
  operationId: "getMyMfa",
  tags: ["mfa"],
  summary: "Your two-factor sign-in: enabled, pending enrolment, recovery codes left",
  auth: "user",
  responses: { 200: jsonResponse(MfaStatusSchema, "Two-factor status") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const user = c.get("user");
    return c.json(await getMfaStatus(c.get("deps"), { id: user.userId, email: user.email }), 200);
  });
}
