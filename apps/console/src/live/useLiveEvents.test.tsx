import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type EventSourceFactory, useLiveEvents } from "./useLiveEvents.ts";

/** A stand-in for the browser's EventSource: the test plays the server's side. */
class FakeSource {
  static opened: FakeSource[] = [];
  readyState = 0;
  closed = false;
  onopen: ((e: Event) => void) | null = null;
  onmessage: ((e: MessageEvent) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  constructor(readonly url: string) {
    FakeSource.opened.push(this);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  send(data: unknown) {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(data) }));
  }
  fail(closed: boolean) {
    this.readyState = closed ? 2 : 0;
    this.onerror?.(new Event("error"));
  }
}
const factory: EventSourceFactory = (url) => new FakeSource(url) as unknown as EventSource;
const last = () => FakeSource.opened.at(-1)!;
const event = (kind: string) => ({ kind, action: "updated", id: "x", at: new Date().toISOString() });

function setup(org: string | null) {
  const queryClient = new QueryClient();
  const keys = [
    ["device", "o1"],
    ["device", "o1", "one"],
    ["tunnel", "o1"],
    ["job", "o1"],
    ["upgrade", "o1", "list"],
  ];
  for (const key of keys) queryClient.setQueryData(key, 1);
  const stale = () => keys.filter((k) => queryClient.getQueryState(k)?.isInvalidated).map((k) => k.join("/"));
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
  );
  const hook = renderHook(({ o }) => useLiveEvents(o, { factory, backoff: () => 1000 }), { wrapper, initialProps: { o: org } });
  return { hook, stale };
}

describe("useLiveEvents", () => {
  beforeEach(() => {
    FakeSource.opened = [];
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  it("subscribes to the organization's stream and marks stale only the queries of the event's kind", () => {
    const { hook, stale } = setup("o1");
    expect(last().url).toBe("/api/events?org=o1");
    act(() => last().open());
    expect(hook.result.current).toBe("live");
    act(() => last().send(event("device")));
    expect(stale()).toEqual(["device/o1", "device/o1/one"]);
    act(() => last().send(event("tunnel")));
    expect(stale()).toEqual(["device/o1", "device/o1/one", "tunnel/o1"]);
    // A device's progress in a rollout: the rollouts refetch.
    act(() => last().send(event("upgrade")));
    expect(stale()).toEqual(["device/o1", "device/o1/one", "tunnel/o1", "upgrade/o1/list"]);
  });

  it("a job event for several jobs of one statement ('*' with a count) marks the job queries stale", () => {
    const { stale } = setup("o1");
    act(() => last().open());
    act(() =>
      last().send({
        kind: "job",
        action: "updated",
        id: "*",
        at: new Date().toISOString(),
        data: { status: "complete", count: 500 },
      }),
    );
    expect(stale()).toEqual(["job/o1"]);
  });

  it("ignores what is not an event, and refetches everything on resync", () => {
    const { stale } = setup("o1");
    act(() => last().open());
    act(() => last().onmessage?.(new MessageEvent("message", { data: "not json" })));
    act(() => last().send({ kind: "weather" }));
    expect(stale()).toEqual([]);
    act(() => last().send(event("resync")));
    expect(stale()).toHaveLength(5);
  });

  it("lets the browser resume by itself, and reopens a closed stream after the back-off, refetching all", () => {
    const { hook, stale } = setup("o1");
    act(() => last().open());
    act(() => last().fail(false));
    expect(hook.result.current).toBe("reconnecting");
    expect(FakeSource.opened).toHaveLength(1); // the browser's own retry: no new stream
    const first = last();
    act(() => first.fail(true));
    expect(first.closed).toBe(true);
    expect(FakeSource.opened).toHaveLength(1);
    act(() => vi.advanceTimersByTime(1000));
    expect(FakeSource.opened).toHaveLength(2);
    act(() => last().open());
    expect(hook.result.current).toBe("live");
    expect(stale()).toHaveLength(5);
  });

  it("switching organization closes the old stream; signing out opens none", () => {
    const { hook } = setup("o1");
    const first = last();
    hook.rerender({ o: "o2" });
    expect(first.closed).toBe(true);
    expect(last().url).toBe("/api/events?org=o2");
    hook.rerender({ o: null });
    expect(last().closed).toBe(true);
    expect(hook.result.current).toBe("off");
    hook.unmount();
  });
});
