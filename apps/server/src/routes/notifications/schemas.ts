import { z } from "@hono/zod-openapi";
import { Notification, NotificationsUpdate } from "@tern/protocol";
import { ListQuerySchema } from "../../http/list-query.ts";

export const NotificationSchema = Notification.meta({ id: "Notification" });
export const NotificationsUpdateSchema = NotificationsUpdate.meta({ id: "NotificationsUpdate" });

/** The filter of a bulk change (no paging or sorting): `filter=[]` selects every notification. */
export const NotificationFilterQuery = z.object({
  filter: ListQuerySchema.shape.filter,
  filters: ListQuerySchema.shape.filters,
});

export const NotificationsUpdatedSchema = z.object({ updated: z.number().int().min(0) }).meta({ id: "NotificationsUpdated" });
export const NotificationsDeletedSchema = z.object({ deleted: z.number().int().min(0) }).meta({ id: "NotificationsDeleted" });

export const NOTIFICATION_KEYS =
  "Filter keys: id, deviceId, device.name, eventType, title, details, severity (info|warning|critical), resolved, status (read|unread), count, tunnelId, interfaceId, vrrpGroupId, bgpNeighbor, createdAt, lastSeenAt, resolvedAt.";
