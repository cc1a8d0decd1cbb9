/**
 * One client's event stream: subscribe first (so nothing is missed), replay
 * the journal after Last-Event-ID (or say `resync`), then pass live events
 * on, keeping only the kinds the caller may read, with a keep-alive comment.
 */
import type { LiveEvent, LiveEventKind, PermissionResource, Permissions } from "@tern/protocol";
import type { SSEStreamingApi } from "hono/streaming";
import { hasPermission } from "../../auth/permissions.ts";
import type { LiveEventHub } from "./hub.ts";

const RESOURCE_OF: Record<Exclude<LiveEventKind, "resync">, PermissionResource> = {
  device: "devices",
  tunnel: "tunnels",
  job: "jobs",
  notification: "notifications",
  upgrade: "devices",
};

/** The kinds of event a caller with these permissions may see (read bit on the kind's resource). */
export function readableKinds(permissions: Permissions): Set<LiveEventKind> {
  const kinds = new Set<LiveEventKind>(["resync"]);
  for (const [kind, resource] of Object.entries(RESOURCE_OF))
    if (hasPermission(permissions, resource, "get")) kinds.add(kind as LiveEventKind);
  return kinds;
}

export async function runEventStream(
  stream: SSEStreamingApi,
  hub: LiveEventHub,
  input: { orgId: string; permissions: Permissions; lastEventId: string | undefined },
): Promise<void> {
  const kinds = readableKinds(input.permissions);
  let ended: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    ended = resolve;
  });
  // Writes are chained so events go out in order; a failed write (client gone) ends the stream.
  let writing: Promise<void> = Promise.resolve();
  let lastSent = -1n;
  const write = (id: string, event: LiveEvent) => {
    if (!kinds.has(event.kind)) return;
    const n = BigInt(id);
    if (n <= lastSent) return;
    lastSent = n;
    writing = writing.then(() => stream.writeSSE({ id, data: JSON.stringify(event) })).catch(() => ended());
  };
  let held: { id: string; event: LiveEvent }[] | null = input.lastEventId ? [] : null;
  const unsubscribe = hub.subscribe({
    orgId: input.orgId,
    send: (id, event) => (held ? held.push({ id, event }) : write(id, event)),
    close: () => ended(),
  });
  stream.onAbort(() => ended());
  const keepAlive = setInterval(() => {
    writing = writing
      .then(() => stream.write(": keep-alive\n\n"))
      .then(
        () => {},
        () => ended(),
      );
  }, hub.keepAliveMs);
  try {
    if (input.lastEventId !== undefined) {
      const replay = await hub.replay(input.orgId, input.lastEventId);
      if (replay.kind === "resync") {
        const at = new Date().toISOString();
        lastSent = BigInt(replay.latestId);
        writing = writing.then(() =>
          stream.writeSSE({ id: replay.latestId, data: JSON.stringify({ kind: "resync", action: "updated", id: "*", at }) }),
        );
      } else for (const e of replay.events) write(e.id, e.event);
      for (const e of held ?? []) write(e.id, e.event);
      held = null;
    }
    // An initial comment so clients and proxies see the stream open at once.
    writing = writing.then(async () => {
      await stream.write(": connected\n\n");
    });
    await finished;
  } finally {
    clearInterval(keepAlive);
    unsubscribe();
    await writing.catch(() => {});
  }
}
