/**
 * Query keys: the first element is the live-event kind whose changes make the
 * query stale (see live/useLiveEvents), the second the organization.
 */
export type ResourceKind = "device" | "tunnel" | "job" | "notification" | "upgrade";

export const queryKey = (kind: ResourceKind, org: string | null, ...rest: unknown[]) => [kind, org, ...rest] as const;
