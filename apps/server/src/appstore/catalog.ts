/** The built-in application catalog. */
import type { CatalogApp } from "@tern/protocol";
import { configSnapshot } from "./apps/config-snapshot.ts";
import { remoteVpn } from "./apps/remote-vpn.ts";
import type { AppDefinition } from "./types.ts";

export const CATALOG: readonly AppDefinition[] = [remoteVpn, configSnapshot];

export function findCatalogApp(id: string): AppDefinition | undefined {
  return CATALOG.find((a) => a.id === id);
}

export function toCatalogApp(app: AppDefinition): CatalogApp {
  return {
    id: app.id,
    name: app.name,
    description: app.description,
    actions: Object.entries(app.actions).map(([name, a]) => ({ name, description: a.description })),
  };
}
