/**
 * A live event of GET /api/events: the protocol's LiveEvent (a type-only
 * import, so the protocol's schemas stay out of the initial bundle). The
 * console reads only `kind` (what to refetch); `data` is a hint.
 */
import type { LiveEvent, LiveEventKind } from "@tern/protocol";

export type { LiveEvent };

const KINDS: ReadonlySet<string> = new Set<LiveEventKind>(["device", "tunnel", "job", "notification", "upgrade", "resync"]);

/** The event of one `data:` payload, or null for anything else (ignored, never fatal). */
export function parseLiveEvent(text: string): LiveEvent | null {
  try {
    const value = JSON.parse(text) as Partial<LiveEvent> | null;
    return typeof value === "object" && value !== null && typeof value.kind === "string" && KINDS.has(value.kind)
      ? (value as LiveEvent)
      : null;
  } catch {
    return null;
  }
}
