import { z } from "@hono/zod-openapi";
import { AppActionRequest, CatalogApp, PurchasedApp } from "@tern/protocol";

export const CatalogAppSchema = CatalogApp.meta({ id: "CatalogApp" });
export const PurchasedAppSchema = PurchasedApp.meta({ id: "PurchasedApp" });
export const AppActionRequestSchema = AppActionRequest.meta({ id: "AppActionRequest" });
export const AppActionResultSchema = z
  .object({
    app: PurchasedAppSchema,
    action: z.string(),
    /** What the action produced, e.g. the new certificate's fingerprint and expiry. */
    result: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "AppActionResult" });

/** A catalog application id in a path (`remote-vpn`). */
export const AppIdParams = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "must be a catalog application id such as remote-vpn")
    .meta({ param: { name: "id", in: "path" }, description: "Catalog application id (see GET /appstore)" }),
});

/** Open: every other query field is an action param, checked by the action's own strict schema. */
export const ActionQuery = z.looseObject({
  action: z
    .string()
    .min(1)
    .max(100)
    // Optional in the schema so a missing action is answered after the lookup, naming the application's actions.
    .optional()
    .meta({ param: { name: "action", in: "query" }, description: "The action to perform, e.g. update-certificate (required)" }),
});

export const ACTION_TEXT =
  "Actions per application (GET /appstore lists them): remote-vpn `update-certificate` (validityDays 1-825, commonName) issues a new self-signed server certificate and answers its fingerprint and expiry (the private key is stored encrypted, never returned); config-snapshot `take-snapshot` / `compare-snapshot` (label). An unknown action is a 400 naming the allowed ones; params are validated per action. Needs the `put` permission on applications, also for GET.";
