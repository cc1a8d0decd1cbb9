import { MantineProvider } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "react-router";
import { SessionProvider } from "../session/SessionProvider.tsx";
import { useBranding } from "./branding.ts";
import { router } from "./router.tsx";
import { themeFor } from "./theme.ts";

const queryClient = new QueryClient({
  defaultOptions: {
    // Live events say when data changed; polling is not needed, a short staleness is enough for focus refetches.
    queries: { staleTime: 10_000, retry: (count, error) => count < 2 && !(error as { status?: number }).status },
  },
});

/** The nonce the server put in index.html: its CSP admits Mantine's <style> elements only with it. */
const styleNonce = document.querySelector('meta[name="tern-csp-nonce"]')?.getAttribute("content") ?? "";

function Themed() {
  const branding = useBranding();
  return (
    <MantineProvider theme={themeFor(branding.accentColor)} defaultColorScheme="auto" getStyleNonce={() => styleNonce}>
      <SessionProvider>
        <RouterProvider router={router} />
      </SessionProvider>
    </MantineProvider>
  );
}

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Themed />
    </QueryClientProvider>
  );
}
