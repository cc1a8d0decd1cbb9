/** Routes from the page registry: the shell around the signed-in pages, the sign-in page outside it. */
import { createBrowserRouter } from "react-router";
import { notFoundPage, type PageEntry, pages, signInPage } from "../pages/registry.ts";
import { Shell } from "./Shell.tsx";

const route = (page: PageEntry) => ({
  path: page.path,
  lazy: async () => ({ Component: (await page.load()).default }),
});

export const router = createBrowserRouter([
  route(signInPage),
  { element: <Shell />, children: [...pages.map(route), route(notFoundPage)] },
]);
