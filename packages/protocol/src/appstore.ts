/** App store: a small catalog, purchased applications and their per-application actions. */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";

export const AppAction = z.object({ name: z.string(), description: z.string() });

export const CatalogApp = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  actions: z.array(AppAction),
});
export type CatalogApp = z.infer<typeof CatalogApp>;

export const PurchasedApp = z.object({
  id: Id,
  org: Id,
  app: CatalogApp.pick({ id: true, name: true }),
  purchasedAt: Timestamp,
  /** Per-application state, e.g. the current certificate's fingerprint and expiry. */
  state: z.record(z.string(), z.unknown()),
  lastAction: z.object({ name: z.string(), at: Timestamp, result: z.string() }).nullable(),
});
export type PurchasedApp = z.infer<typeof PurchasedApp>;

/** `GET|POST /appstore/purchased/{id}/action?action=NAME` (params as query or JSON body). */
export const AppActionRequest = z.object({
  action: z.string().min(1).max(100),
  params: z.record(z.string(), z.unknown()).default({}),
});
