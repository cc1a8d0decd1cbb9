/**
 * The overview's reads, sized to what it draws rather than to the fleet.
 * The figures are counts (`records-total` of a `limit=0` list with a filter:
 * no row travels); the mesh graph draws at most MAX_NODES devices, so it
 * reads the troubled tunnels (one page) to choose them and then only the
 * tunnels of the chosen devices; the worst-tunnels panel reads the few
 * tunnels it ranks. With 10,000 devices and 20,000 tunnels, reading every
 * tunnel (20 pages of 1,000) took 5 s before the graph could be drawn.
 */
import { keepPreviousData, queryOptions } from "@tanstack/react-query";
import { ok, type TunnelSummary } from "@tern/client";
import type { Filter } from "../../api/filter.ts";
import { queryKey } from "../../api/keys.ts";
import { readAll } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { TUNNEL_STATUSES } from "./summary.ts";

/** Devices per `device.id in [...]` read: keeps the URL of one request under ~5 KB. */
const IDS_PER_READ = 100;

const filterText = (filter: Filter[]) => JSON.stringify(filter);

/** The `records-total` of a list call (made with limit 0: nothing but the count is read). */
async function totalOf(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<number> {
  const answer = await call;
  await ok(Promise.resolve(answer));
  const total = Number(answer.response.headers.get("records-total"));
  if (!Number.isFinite(total)) throw new Error("the list answered without a records-total header");
  return total;
}

const countDevices = (filter: Filter[]) =>
  totalOf(tern.api.GET("/api/devices", { params: { query: { limit: 0, filter: filterText(filter) } } }));
const countTunnels = (filter: Filter[]) =>
  totalOf(tern.api.GET("/api/tunnels", { params: { query: { limit: 0, filter: filterText(filter) } } }));

/** Devices online / offline / pending, counted by the server. */
export const deviceCountsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("device", org, "counts"),
    queryFn: async () => {
      const approved = (isConnected: boolean): Filter[] => [
        { key: "isApproved", op: "==", val: true },
        { key: "isConnected", op: "==", val: isConnected },
      ];
      const [online, offline, pending] = await Promise.all([
        countDevices(approved(true)),
        countDevices(approved(false)),
        countDevices([{ key: "isApproved", op: "==", val: false }]),
      ]);
      return { online, offline, pending, total: online + offline + pending };
    },
  });

/** Tunnels by status, counted by the server. */
export const tunnelCountsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "counts"),
    queryFn: async () => {
      const counts = await Promise.all(TUNNEL_STATUSES.map((s) => countTunnels([{ key: "status", op: "==", val: s }])));
      return Object.fromEntries(TUNNEL_STATUSES.map((s, i) => [s, counts[i]!])) as Record<
        (typeof TUNNEL_STATUSES)[number],
        number
      >;
    },
  });

const summaries = async (query: { filter: Filter[]; offset?: number; limit: number }) =>
  (await ok(
    tern.api.GET("/api/tunnels", {
      params: { query: { response: "summary", filter: filterText(query.filter), offset: query.offset ?? 0, limit: query.limit } },
    }),
  )) as TunnelSummary[];

/** Up to 1,000 tunnels not Connected (nor N/A): their ends are drawn first. */
export const troubledTunnelsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "troubled"),
    queryFn: () => summaries({ filter: [{ key: "status", op: "in", val: ["Not Connected", "Pending"] }], limit: 1000 }),
  });

/** Every tunnel with an end among `deviceIds` (the devices the mesh draws). */
export const tunnelsOfDevicesQuery = (org: string | null, deviceIds: string[]) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "of-devices", deviceIds.join(",")),
    queryFn: async () => {
      const chunks: string[][] = [];
      for (let i = 0; i < deviceIds.length; i += IDS_PER_READ) chunks.push(deviceIds.slice(i, i + IDS_PER_READ));
      const pages = await Promise.all(
        chunks.map((ids) =>
          readAll((offset, limit) => summaries({ filter: [{ key: "device.id", op: "in", val: ids }], offset, limit })),
        ),
      );
      // A tunnel between two chunks comes twice.
      return [...new Map(pages.flat().map((t) => [t.id, t])).values()];
    },
    // A live change of the chosen devices keeps the drawing until the new tunnels are read.
    placeholderData: keepPreviousData,
  });

/** The first `count` tunnels that report figures (not N/A), for the worst-tunnels ranking. */
export const rankedTunnelsQuery = (org: string | null, count: number) =>
  queryOptions({
    queryKey: queryKey("tunnel", org, "ranked", count),
    queryFn: () => summaries({ filter: [{ key: "status", op: "!=", val: "N/A" }], limit: count }),
  });
