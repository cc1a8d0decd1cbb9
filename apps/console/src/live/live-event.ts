/**
 * A live event of GET /api/events (the console contract). The server side
 * declares it as LiveEvent in @tern/protocol (live-events.ts, on the
 * console-server branch); until that lands here this mirrors its shape, and
 * the console only reads `kind` (what to refetch): `data` is a hint.
 */
export interface LiveEvent {
  kind: "device" | "tunnel" | "job" | "notification" | "resync";
  action: "created" | "updated" | "deleted";
  id: string;
  at: string;
  data?: Record<string, unknown>;
}

const KINDS = new Set(["device", "tunnel", "job", "notification", "resync"]);

/** The event of one `data:` payload, or null for anything else (ignored, never fatal). */
export function parseLiveEvent(text: string): LiveEvent | null {
  try {
    const value = JSON.parse(text) as Partial<LiveEvent>;
    return typeof value === "object" && value !== null && typeof value.kind === "string" && KINDS.has(value.kind)
      ? (value as LiveEvent)
      : null;
  } catch {
    return null;
  }
}
