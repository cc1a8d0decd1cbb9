import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { registerDevice } from "../../services/devices/registration.ts";
import { RegisterRequestSchema, RegisterResponseSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/connect/register",
  operationId: "registerDevice",
  tags: ["connect"],
  summary: "A device registers with a registration token (called by the agent)",
  description: [
    "Creates the device **unapproved** in the token's organization with the interfaces, hostname, machine id and versions it reports, and answers a device token (`tern_dev_…`, shown once, stored hashed) for its websocket. An admin approves it with PUT /api/devices/{id} `isApproved: true`.",
    "Interfaces get server-assigned ids; the one with a default gateway is suggested as WAN, none is assigned until the admin assigns it.",
    "The same machine id registering again in the same organization is the same device (200): its device token is rotated (the old one stops working), hostname, versions and unassigned interfaces are refreshed, the admin's settings of assigned interfaces and the approval are kept.",
    "An unknown or expired token is 401. Rate limited per client IP (TERN_REGISTER_RATE_IP per TERN_REGISTER_RATE_WINDOW seconds): 429 with Retry-After.",
  ].join("\n\n"),
  auth: "public",
  // Agents upgrade on their own schedule: a newer agent's extra fields are dropped, not refused.
  allowUnknownFields: true,
  errors: ["UNAUTHENTICATED", "REGISTRATION_TOKEN_EXHAUSTED", "RATE_LIMITED", "CONFLICT", "ACCOUNT_LIMIT"],
  request: { body: jsonBody(RegisterRequestSchema) },
  responses: {
    201: jsonResponse(RegisterResponseSchema, "A new device, unapproved"),
    200: jsonResponse(RegisterResponseSchema, "A known machine registered again: new device token"),
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { created, response } = await registerDevice(c.get("deps"), c.req.valid("json"), { ip: c.get("clientIp") });
    return created ? c.json(response, 201) : c.json(response, 200);
  });
}
