/**
 * The API reads the pages share, as react-query options. Lists the API pages
 * (at most 1000 per call) are read whole, page after page: the console sorts
 * and filters them in the browser, which stays instant for 10,000 devices.
 */

import { queryOptions } from "@tanstack/react-query";
import { type DeviceSummary, ok, type TunnelSummary } from "@tern/client";
import { queryKey } from "./keys.ts";
import { tern } from "./tern.ts";

const PAGE = 1000;

/** Reads offset pages of `read` until a short page. */
export async function readAll<T>(read: (offset: number, limit: number) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await read(offset, PAGE);
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

export const devicesQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("device", org, "list"),
    queryFn: () =>
      readAll(
        async (offset, limit) =>
          (await ok(
            tern.api.GET("/api/devices", { params: { query: { response: "summary", offset, limit } } }),
          )) as DeviceSummary[],
      ),
  });

export const tunnelsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "list"),
    queryFn: () =>
      readAll(
        async (offset, limit) =>
          (await ok(
            tern.api.GET("/api/tunnels", { params: { query: { response: "summary", offset, limit } } }),
          )) as TunnelSummary[],
      ),
  });

export const notificationsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("notification", org, "list"),
    queryFn: () =>
      readAll((offset, limit) =>
        ok(tern.api.GET("/api/notifications", { params: { query: { offset, limit, sort: "createdAt", order: "desc" } } })),
      ),
  });

/** Loss/RTT/jitter samples of a tunnel over the last `minutes`. */
export const tunnelStatsQuery = (org: string | null, id: string, minutes: number, maxPoints = 300) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "stats", id, minutes, maxPoints),
    queryFn: () => {
      const to = new Date();
      const from = new Date(to.getTime() - minutes * 60_000);
      return ok(
        tern.api.GET("/api/tunnels/{id}/stats", {
          params: { path: { id }, query: { from: from.toISOString(), to: to.toISOString(), maxPoints } },
        }),
      );
    },
  });

/** A device's statistics history (interfaces, health, BGP/VRRP changes) over the last `minutes`; the server picks the step. */
export const deviceStatisticsQuery = (org: string | null, id: string, minutes: number) =>
  queryOptions({
    queryKey: queryKey("device", org, "statistics", id, minutes),
    queryFn: () => {
      const to = new Date();
      const from = new Date(to.getTime() - minutes * 60_000);
      return ok(
        tern.api.GET("/api/devices/{id}/statistics", {
          params: { path: { id }, query: { from: from.toISOString(), to: to.toISOString() } },
        }),
      );
    },
  });
