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
    /** Jobs queued for devices whose configuration changed (install, uninstall, certificate or user changes). */
    jobIds: z.array(z.string()),
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
    .meta({ param: { name: "action", in: "query" }, description: "The action to perform, e.g. updateCertificate (required)" }),
});

export const ACTION_TEXT =
  "Actions per application (GET /appstore lists them). remote-vpn: `install` (device, pool, dns, subnets) and `uninstall` (device) run or stop IKEv2 remote access on a router; `updateCertificate` (validityDays 1-825, commonName) issues a new server certificate from the organization CA and rolls it out to every device running the VPN; `addUser` (name, password for EAP-MSCHAPv2, or auth=certificate for a certificate answered once with its key) and `removeUser` (name). Keys and passwords are stored encrypted and never returned (a password is write-only). Actions that change devices answer the queued `jobIds`. config-snapshot: `take-snapshot` / `compare-snapshot` (label). An unknown action is a 400 naming the allowed ones; params are validated per action. Needs the `put` permission on applications, also for GET.";
