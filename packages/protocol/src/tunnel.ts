/** Tunnels between two devices' WAN interfaces, or from a device interface to a peer. */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";
import { Filter } from "./list-query.ts";

/** Status computed from both ends' reports (the spec's `tunnelStatus`). */
export const TunnelStatus = z.enum(["Connected", "Not Connected", "Pending"]);
export type TunnelStatus = z.infer<typeof TunnelStatus>;
/** Overall status: additionally N/A when a device is not connected. */
export const TunnelOverallStatus = z.enum(["Connected", "Not Connected", "Pending", "N/A"]);
export type TunnelOverallStatus = z.infer<typeof TunnelOverallStatus>;

export const TunnelEndRef = z.object({ id: Id, name: z.string(), hostname: z.string() });
export const TunnelInterfaceRef = z.object({ id: Id, name: z.string(), IPv4: z.string() });

export const TunnelThresholds = z.object({
  rtt: z
    .object({ warning: z.number().min(1).max(60000), critical: z.number().min(1).max(60000) })
    .nullable()
    .default(null),
  dropRate: z
    .object({ warning: z.number().min(0).max(100), critical: z.number().min(0).max(100) })
    .nullable()
    .default(null),
});
export type TunnelThresholds = z.infer<typeof TunnelThresholds>;

export const TunnelQuality = z.object({
  /** Loss in percent over the sliding window (`samples` probes over `windowMs`). */
  loss: z.number().min(0).max(100),
  /** Mean round-trip time of the answered probes in the window, milliseconds. */
  rtt: z.number().min(0),
  /** RFC 3550 interarrival jitter of the probe RTTs, milliseconds. */
  jitter: z.number().min(0),
  up: z.boolean(),
  at: Timestamp,
  /** Probes the loss figure is over. */
  samples: z.number().int().min(0),
  /** Time the window covers, ms; null from agents that do not report it. */
  windowMs: z.number().int().min(0).nullable(),
});
export type TunnelQuality = z.infer<typeof TunnelQuality>;

/** `POST /tunnels`: device-to-device (B given) or device-to-peer (peer given). */
export const TunnelCreate = z
  .object({
    deviceA: Id,
    interfaceA: Id,
    deviceB: Id.nullable().optional(),
    interfaceB: Id.nullable().optional(),
    peer: Id.nullable().optional(),
    /** Optional path label the tunnel belongs to. */
    pathlabel: Id.nullable().optional(),
    description: z.string().max(200).default(""),
  })
  .superRefine((t, ctx) => {
    const hasB = t.deviceB != null || t.interfaceB != null;
    if (t.peer != null && hasB)
      ctx.addIssue({ code: "custom", path: ["peer"], message: "give either deviceB/interfaceB or peer, not both" });
    if (t.peer == null && (t.deviceB == null || t.interfaceB == null))
      ctx.addIssue({ code: "custom", path: ["deviceB"], message: "deviceB and interfaceB are required unless peer is given" });
    if (t.deviceB != null && t.deviceB === t.deviceA)
      ctx.addIssue({ code: "custom", path: ["deviceB"], message: "a tunnel needs two different devices" });
  });
export type TunnelCreate = z.infer<typeof TunnelCreate>;

/** `POST /tunnels` accepts one tunnel or a list of them. */
export const TunnelCreateBody = z.union([TunnelCreate, z.array(TunnelCreate).min(1).max(1000)]);

export const Tunnel = z.object({
  id: Id,
  org: Id,
  num: z.number().int().min(0),
  description: z.string(),
  deviceA: TunnelEndRef,
  interfaceA: TunnelInterfaceRef,
  /** Null for a peer connection. */
  deviceB: TunnelEndRef.nullable(),
  interfaceB: TunnelInterfaceRef.nullable(),
  peer: z.object({ id: Id, name: z.string(), remoteIP: z.string() }).nullable(),
  pathlabel: Id.nullable(),
  /** /31 loopback addresses of the A and B ends from the organization's tunnel range. */
  loopbackA: z.string(),
  loopbackB: z.string(),
  tunnelStatus: TunnelStatus,
  status: TunnelOverallStatus,
  tunnelStatusA: z.enum(["up", "down", "unknown"]),
  tunnelStatusB: z.enum(["up", "down", "unknown"]),
  isPending: z.boolean(),
  pendingReason: z.string(),
  notifications: TunnelThresholds,
  quality: z.object({ a: TunnelQuality.nullable(), b: TunnelQuality.nullable() }),
  createdAt: Timestamp,
});
export type Tunnel = z.infer<typeof Tunnel>;

export const TunnelSummary = Tunnel.pick({
  id: true,
  num: true,
  deviceA: true,
  deviceB: true,
  peer: true,
  tunnelStatus: true,
  status: true,
  isPending: true,
  pendingReason: true,
});
export type TunnelSummary = z.infer<typeof TunnelSummary>;

/** `PUT /tunnels/notifications`: thresholds for the selected tunnels (by ids or a filter). */
export const TunnelNotificationsUpdate = z
  .object({
    ids: z.array(Id).max(10000).optional(),
    filter: z.array(Filter).max(20).optional(),
    notifications: TunnelThresholds,
  })
  .refine((b) => b.ids !== undefined || b.filter !== undefined, { message: "give ids or filter", path: ["ids"] })
  .superRefine((b, ctx) => {
    const { rtt, dropRate } = b.notifications;
    if (rtt && rtt.warning > rtt.critical)
      ctx.addIssue({ code: "custom", path: ["notifications", "rtt", "warning"], message: "warning must not exceed critical" });
    if (dropRate && dropRate.warning > dropRate.critical)
      ctx.addIssue({
        code: "custom",
        path: ["notifications", "dropRate", "warning"],
        message: "warning must not exceed critical",
      });
  });

/** One stored sample (`GET /tunnels/{id}/stats`). */
export const TunnelSample = z.object({
  at: Timestamp,
  side: z.enum(["a", "b"]),
  loss: z.number(),
  rtt: z.number(),
  jitter: z.number(),
  up: z.boolean(),
});
export type TunnelSample = z.infer<typeof TunnelSample>;

/** `GET /tunnels/{id}/stats`: samples of both ends over a time range, downsampled when there are many. */
export const TunnelStats = z.object({
  tunnelId: Id,
  from: Timestamp,
  to: Timestamp,
  /** Null: every stored sample. Otherwise each point is one end's mean over a bucket of this many seconds (`up`: up the whole bucket). */
  bucketSeconds: z.number().int().positive().nullable(),
  samples: z.array(TunnelSample),
  /** With `step`: the storage tier read (raw samples, 1-minute or 1-hour roll-ups); absent without `step`. */
  tier: z.enum(["raw", "1m", "1h"]).optional(),
});
export type TunnelStats = z.infer<typeof TunnelStats>;

/** `POST /tunnels` answer: the queued jobs and each new tunnel's number and loopbacks (in request order). */
export const TunnelsCreated = z.object({
  jobIds: z.array(Id),
  tunnels: z.array(z.object({ id: Id, num: z.number().int().min(0), loopbackA: z.string(), loopbackB: z.string() })),
});
export type TunnelsCreated = z.infer<typeof TunnelsCreated>;

/** `DELETE /tunnels` and `DELETE /tunnels/{id}` answer: the queued jobs and the ids of the deleted tunnels. */
export const TunnelsDeleted = z.object({ jobIds: z.array(Id), deleted: z.array(Id) });
export type TunnelsDeleted = z.infer<typeof TunnelsDeleted>;

/** `PUT /tunnels/notifications` answer: the tunnels whose thresholds were set. */
export const TunnelNotificationsResult = z.object({ ids: z.array(Id) });
