/**
 * Live updates: one EventSource on /api/events?org=… while signed in. Each
 * event marks the queries of its kind stale (their keys start with the kind,
 * see api/keys.ts), so the pages refetch what changed without a reload. The
 * browser reconnects by itself (sending Last-Event-ID, so the server replays
 * what was missed); when the stream is closed for good (an error answer, a
 * server restart) the hook opens a new one after a growing delay and refetches
 * everything, since events may have been missed meanwhile; a `resync` event
 * from the server means the same.
 */
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { parseLiveEvent } from "./live-event.ts";

export type LiveStatus = "connecting" | "live" | "reconnecting" | "off";

type EventSourceLike = Pick<EventSource, "close" | "readyState" | "onopen" | "onmessage" | "onerror">;
export type EventSourceFactory = (url: string) => EventSourceLike;

const CLOSED = 2;
const defaultFactory: EventSourceFactory = (url) => new EventSource(url, { withCredentials: true });

export interface LiveOptions {
  factory?: EventSourceFactory;
  /** Delay before the n-th reopening (n from 1), in ms. */
  backoff?: (attempt: number) => number;
}

export const defaultBackoff = (attempt: number) => Math.min(30_000, 500 * 2 ** (attempt - 1));

/** Opens the stream for `org` (none when null) and keeps it open; answers the connection's state. */
export function useLiveEvents(org: string | null, options: LiveOptions = {}): LiveStatus {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>(org ? "connecting" : "off");
  // Read at each (re)opening: a caller's inline options must not reopen the stream at every render.
  const optionsRef = useRef(options);
  optionsRef.current = options;

  useEffect(() => {
    if (!org) {
      setStatus("off");
      return;
    }
    let source: EventSourceLike | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let stopped = false;

    const open = () => {
      const current = (optionsRef.current.factory ?? defaultFactory)(`/api/events?org=${encodeURIComponent(org)}`);
      source = current;
      current.onopen = () => {
        // A reopened stream (not the browser's own resume) may have missed events.
        if (attempt > 0) refetchAll(queryClient);
        attempt = 0;
        setStatus("live");
      };
      current.onmessage = (message: MessageEvent) => onEvent(queryClient, String(message.data));
      current.onerror = () => {
        if (stopped) return;
        if (current.readyState !== CLOSED) {
          setStatus("reconnecting"); // the browser retries by itself, with Last-Event-ID
          return;
        }
        current.close();
        attempt += 1;
        setStatus("reconnecting");
        timer = setTimeout(() => !stopped && open(), (optionsRef.current.backoff ?? defaultBackoff)(attempt));
      };
    };
    setStatus("connecting");
    open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      source?.close();
    };
  }, [org, queryClient]);

  return status;
}

function refetchAll(queryClient: QueryClient) {
  void queryClient.invalidateQueries();
}

function onEvent(queryClient: QueryClient, text: string) {
  const event = parseLiveEvent(text);
  if (!event) return;
  if (event.kind === "resync") refetchAll(queryClient);
  else void queryClient.invalidateQueries({ queryKey: [event.kind] });
}
