/** The reads of the tunnels pages: the tunnels with their live quality (detailed), the devices' WAN interfaces. */
import { queryOptions } from "@tanstack/react-query";
import { ok, type Tunnel } from "@tern/client";
import { queryKey } from "../../api/keys.ts";
import { readAll } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";

/**
 * Live events say when a tunnel's status changes, not each new loss/RTT/jitter
 * sample (that would be an event per tunnel every few seconds): the figures
 * are refreshed by polling, every FIGURES_MS while the page is shown.
 */
export const FIGURES_MS = 10_000;

export const detailedTunnelsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "detailed"),
    refetchInterval: FIGURES_MS,
    queryFn: () =>
      readAll(
        async (offset, limit) =>
          (await ok(tern.api.GET("/api/tunnels", { params: { query: { response: "detailed", offset, limit } } }))) as Tunnel[],
      ),
  });

export const deviceQuery = (org: string | null, id: string) =>
  queryOptions({
    queryKey: queryKey("device", org, "one", id),
    queryFn: () => ok(tern.api.GET("/api/devices/{id}", { params: { path: { id } } })),
    enabled: Boolean(id),
  });
