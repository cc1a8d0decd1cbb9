/**
 * The console's pages: one line each. A page is a folder src/pages/<page>/
 * whose index.tsx default-exports its component; it is loaded lazily (its own
 * chunk), so adding a page costs the initial bundle nothing. `nav` puts it in
 * the side navigation, in this order.
 */
import type { ComponentType } from "react";

export interface PageEntry {
  path: string;
  nav?: string;
  load: () => Promise<{ default: ComponentType }>;
}

export const pages: PageEntry[] = [
  { path: "/", nav: "Overview", load: () => import("./overview/index.tsx") },
  { path: "/devices", nav: "Devices", load: () => import("./devices/index.tsx") },
  { path: "/devices/:id", load: () => import("./device/index.tsx") },
  { path: "/tunnels", nav: "Tunnels", load: () => import("./tunnels/index.tsx") },
  { path: "/tunnels/:id", load: () => import("./tunnel/index.tsx") },
  { path: "/peers", nav: "Peers", load: () => import("./peers/index.tsx") },
  { path: "/jobs", nav: "Jobs", load: () => import("./jobs/index.tsx") },
  { path: "/upgrades", nav: "Agent upgrades", load: () => import("./upgrades/index.tsx") },
  { path: "/upgrades/:id", load: () => import("./upgrade/index.tsx") },
  { path: "/notifications", nav: "Notifications", load: () => import("./notifications/index.tsx") },
  { path: "/organization", nav: "Organization", load: () => import("./organization/index.tsx") },
  { path: "/branding", nav: "Branding", load: () => import("./branding/index.tsx") },
  { path: "/account", nav: "Account", load: () => import("./account/index.tsx") },
];

/** Outside the signed-in shell. */
export const signInPage: PageEntry = { path: "/signin", load: () => import("./signin/index.tsx") };
export const notFoundPage: PageEntry = { path: "*", load: () => import("./not-found/index.tsx") };
