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
  // Writes are chained so events go out in the order they arrive; a failed write (client gone) ends the stream.
  // Not in id order, and none is dropped for its id: ids come from a sequence when a change is made, and
  // transactions commit (and NOTIFY) in another order, so an event may arrive after one with a higher id.
  let writing: Promise<void> = Promise.resolve();
  const write = (id: string, event: LiveEvent) => {
    if (!kinds.has(event.kind)) return;
    writing = writing.then(() => stream.writeSSE({ id, data: JSON.stringify(event) })).catch(() => ended());
  };
  let held: { id: string; event: LiveEvent }[] | null = input.lastEventId ? [] : null;
  // The replayed events' ids: such an event's NOTIFY may still arrive after the replay (at most the replay
  // limit of ids, kept for the stream's life).
  const replayed = new Set<string>();
  const unsubscribe = hub.subscribe({
    orgId: input.orgId,
    send: (id, event) => (held ? held.push({ id, event }) : replayed.has(id) ? undefined : write(id, event)),
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
        writing = writing.then(() =>
          stream.writeSSE({ id: replay.latestId, data: JSON.stringify({ kind: "resync", action: "updated", id: "*", at }) }),
        );
      } else
        for (const e of replay.events) {
          replayed.add(e.id);
          write(e.id, e.event);
        }
      // Events that arrived while the journal was read may be in the replay too: those go out once.
      for (const e of held ?? []) if (!replayed.has(e.id)) write(e.id, e.event);
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
