/** Live events: what GET /api/events pushes to the console (server-sent events, one JSON per `data:` line). */
import * as z from "zod";
import { Timestamp } from "./common.ts";

/** The kinds of resource a live event may be about; `resync` tells the client to refetch everything. */
export const LiveEventKind = z.enum(["device", "tunnel", "job", "notification", "upgrade", "resync"]);
export type LiveEventKind = z.infer<typeof LiveEventKind>;

export const LiveEventAction = z.enum(["created", "updated", "deleted"]);
export type LiveEventAction = z.infer<typeof LiveEventAction>;

/**
 * Summary hints per kind; the console treats them as hints and refetches. A device event announces the devices
 * of an organization one database statement created, deleted or changed (connection, approval, name): the device's
 * own id and summary when it was one device, `*` with their `count` when several (a batch of hellos, a bulk
 * approval).
 */
export const DeviceEventData = z.object({
  isConnected: z.boolean().optional(),
  isApproved: z.boolean().optional(),
  name: z.string().optional(),
  count: z.number().int().optional(),
});
/** A tunnel whose status flipped: its own id and status, or `*` with the `count` of an organization's flips in one write. */
export const TunnelEventData = z.object({ status: z.string().optional(), count: z.number().int().optional() });
/**
 * A job event announces the jobs one database statement moved to `status` (a fan-out's INSERT, a batch of
 * dispatches or results): the job's own id when it was one job, `*` with their `count` when several.
 */
export const JobEventData = z.object({
  status: z.string().optional(),
  progress: z.number().optional(),
  count: z.number().int().optional(),
});
export const NotificationEventData = z.object({
  severity: z.string().optional(),
  title: z.string().optional(),
  status: z.string().optional(),
  resolved: z.boolean().optional(),
});

/** A device's progress in an agent rollout changed (`id` is the rollout's). */
export const UpgradeEventData = z.object({ device: z.string().optional(), status: z.string().optional() });

/** One live event. `id` is the resource's id ("*" for resync); the SSE `id:` line carries the event id. */
export const LiveEvent = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("device"),
    action: LiveEventAction,
    id: z.string(),
    at: Timestamp,
    data: DeviceEventData.optional(),
  }),
  z.object({
    kind: z.literal("tunnel"),
    action: LiveEventAction,
    id: z.string(),
    at: Timestamp,
    data: TunnelEventData.optional(),
  }),
  z.object({ kind: z.literal("job"), action: LiveEventAction, id: z.string(), at: Timestamp, data: JobEventData.optional() }),
  z.object({
    kind: z.literal("notification"),
    action: LiveEventAction,
    id: z.string(),
    at: Timestamp,
    data: NotificationEventData.optional(),
  }),
  z.object({
    kind: z.literal("upgrade"),
    action: LiveEventAction,
    id: z.string(),
    at: Timestamp,
    data: UpgradeEventData.optional(),
  }),
  z.object({ kind: z.literal("resync"), action: LiveEventAction, id: z.literal("*"), at: Timestamp }),
]);
export type LiveEvent = z.infer<typeof LiveEvent>;

/** A resource event (everything but resync). */
export type ResourceLiveEvent = Exclude<LiveEvent, { kind: "resync" }>;
