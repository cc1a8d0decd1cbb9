/** Path labels and multi-link policies (quality based routing with the `link-quality` action). */
import * as z from "zod";
import { Description, Id, Name, Network, PortRange, Timestamp } from "./common.ts";

export const PathLabelCreate = z.object({
  name: Name,
  description: Description,
  color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, "must be a colour like #1f77b4")
    .default("#1f77b4"),
  type: z.enum(["DIA", "Tunnel"]).default("DIA"),
});
export const PathLabel = PathLabelCreate.extend({ id: Id, org: Id, createdAt: Timestamp });
export type PathLabel = z.infer<typeof PathLabel>;

export const PolicyMatch = z.object({
  source: Network.or(z.literal("")).default(""),
  destination: Network.or(z.literal("")).default(""),
  protocol: z.enum(["any", "tcp", "udp", "icmp"]).default("any"),
  ports: PortRange.or(z.literal("")).default(""),
  /** DSCP value to match, or null. */
  dscp: z.number().int().min(0).max(63).nullable().default(null),
});
export type PolicyMatch = z.infer<typeof PolicyMatch>;

/** Quality thresholds a path must meet to carry traffic under `link-quality`. */
export const LinkQualityThresholds = z.object({
  maxLossPercent: z.number().min(0).max(100).default(5),
  maxLatencyMs: z.number().min(1).max(10000).default(300),
  maxJitterMs: z.number().min(0).max(10000).default(50),
  /** A path must meet the thresholds this long before traffic moves back to it. */
  holdDownSeconds: z.number().int().min(0).max(3600).default(10),
});
export type LinkQualityThresholds = z.infer<typeof LinkQualityThresholds>;

/**
 * What a rule does with matching traffic: `priority` uses the first available
 * path label in order; `link-quality` the first whose measured loss, latency
 * and jitter meet the thresholds (with hold-down as hysteresis).
 */
export const PolicyAction = z
  .object({
    order: z.enum(["priority", "link-quality"]).default("priority"),
    pathlabels: z.array(Id).max(8).default([]),
    /**
     * Cloud security: send the matching traffic that would otherwise take the
     * default route (internet-bound; LAN-to-LAN and site routes are kept)
     * through the device's tunnel(s) to this peer connection, instead of path labels.
     */
    peer: Id.optional(),
    fallback: z.enum(["by-destination", "drop"]).default("by-destination"),
    linkQuality: LinkQualityThresholds.optional(),
  })
  .superRefine((a, ctx) => {
    if (a.peer !== undefined && a.pathlabels.length > 0)
      ctx.addIssue({ code: "custom", path: ["peer"], message: "give either pathlabels or peer, not both" });
    if (a.peer === undefined && a.pathlabels.length === 0)
      ctx.addIssue({ code: "custom", path: ["pathlabels"], message: "pathlabels needs at least one path label (or give peer)" });
  })
  .transform((a) => (a.order === "link-quality" ? { ...a, linkQuality: a.linkQuality ?? LinkQualityThresholds.parse({}) } : a));
export type PolicyAction = z.infer<typeof PolicyAction>;

export const PolicyRule = z.object({
  name: Name,
  priority: z.number().int().min(0).max(1000),
  enabled: z.boolean().default(true),
  match: PolicyMatch,
  action: PolicyAction,
});
export type PolicyRule = z.infer<typeof PolicyRule>;

export const MlPolicyCreate = z
  .object({ name: Name, description: Description, rules: z.array(PolicyRule).max(100).default([]) })
  .superRefine((p, ctx) => {
    const seen = new Set<number>();
    p.rules.forEach((r, i) => {
      if (seen.has(r.priority))
        ctx.addIssue({ code: "custom", path: ["rules", i, "priority"], message: "rule priorities must be unique" });
      seen.add(r.priority);
    });
  });
export type MlPolicyCreate = z.infer<typeof MlPolicyCreate>;

export const MlPolicy = z.object({
  id: Id,
  org: Id,
  name: z.string(),
  description: z.string(),
  rules: z.array(PolicyRule),
  /** Number of devices the policy is installed on (device `policies.multilink`). */
  installedOn: z.number().int().min(0),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type MlPolicy = z.infer<typeof MlPolicy>;
