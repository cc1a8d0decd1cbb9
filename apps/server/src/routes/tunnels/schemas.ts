import { z } from "@hono/zod-openapi";
import {
  ListQueryRaw,
  ResponseType,
  Tunnel,
  TunnelCreate,
  TunnelNotificationsResult,
  TunnelNotificationsUpdate,
  TunnelStats,
  TunnelSummary,
  TunnelsCreated,
  TunnelsDeleted,
} from "@tern/protocol";
import { AfterParam, ListQuerySchema } from "../../http/list-query.ts";

export const TunnelSchema = Tunnel.meta({ id: "Tunnel" });
export const TunnelSummarySchema = TunnelSummary.meta({ id: "TunnelSummary" });
export const TunnelCreateSchema = TunnelCreate.meta({ id: "TunnelCreate" });
/** One tunnel or a list of them (all or nothing). */
export const TunnelCreateBodySchema = z
  .union([TunnelCreateSchema, z.array(TunnelCreateSchema).min(1).max(1000)])
  .meta({ id: "TunnelCreateBody" });
export const TunnelsCreatedSchema = TunnelsCreated.meta({ id: "TunnelsCreated" });
export const TunnelStatsSchema = TunnelStats.meta({ id: "TunnelStats" });
export const TunnelsDeletedSchema = TunnelsDeleted.meta({ id: "TunnelsDeleted" });
export const TunnelNotificationsUpdateSchema = TunnelNotificationsUpdate.meta({ id: "TunnelNotificationsUpdate" });
export const TunnelNotificationsResultSchema = TunnelNotificationsResult.meta({ id: "TunnelNotificationsResult" });

export const TunnelListQuery = ListQuerySchema.extend({
  response: ResponseType.default("detailed").meta({
    description: "detailed (default): every field; summary: id, num, ends, peer and status only",
  }),
  ...AfterParam,
});

/** `DELETE /tunnels` takes only the filter (same keys as the list). */
export const TunnelDeleteQuery = z.object({
  filter: ListQueryRaw.shape.filter.meta({
    description:
      'JSON array of {key, op, val} with the keys of GET /tunnels; required (to delete all: [{"key":"num","op":">=","val":0}])',
  }),
  filters: ListQueryRaw.shape.filters.meta({ description: "Alias of filter" }),
});
