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
];

/** Outside the signed-in shell. */
export const signInPage: PageEntry = { path: "/signin", load: () => import("./signin/index.tsx") };
export const notFoundPage: PageEntry = { path: "*", load: () => import("./not-found/index.tsx") };
