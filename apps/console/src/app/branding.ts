/** The installation's branding (GET /api/branding, public): product name, accent colour, logo. */

import { useQuery } from "@tanstack/react-query";
import type { Branding } from "@tern/client";
import { consoleSession } from "../api/tern.ts";

export const DEFAULT_BRANDING: Branding = { productName: "Tern", accentColor: "#0b7285", logoUrl: null };

export function useBranding(): Branding {
  const { data } = useQuery({
    queryKey: ["branding"],
    // A server without branding (or an unreachable one) shows the defaults rather than no header at all.
    queryFn: () => consoleSession.branding().catch(() => DEFAULT_BRANDING),
    staleTime: 5 * 60_000,
  });
  return data ?? DEFAULT_BRANDING;
}
