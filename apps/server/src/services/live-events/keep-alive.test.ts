/**
 * The event stream's own rhythm, without a network: a keep-alive comment at
 * the hub's interval, and the stream ends when the hub closes.
 */
import { ROLE_PERMISSIONS } from "@tern/protocol";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import { LiveEventHub } from "./hub.ts";
import { runEventStream } from "./stream.ts";

const t = useTestServer();

describe("event stream keep-alive", () => {
  it("sends ': keep-alive' at the interval and ends when the hub closes", async () => {
    const hub = new LiveEventHub(t.database.db, { on: () => {} }, pino({ level: "silent" }), { keepAliveMs: 50 });
    const app = new Hono();
    app.get("/events", (c) =>
      streamSSE(c, (stream) =>
        runEventStream(stream, hub, { orgId: t.admin.orgId, permissions: ROLE_PERMISSIONS.viewer, lastEventId: undefined }),
      ),
    );
    const res = await app.request("/events");
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/: keep-alive/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toContain(": connected\n\n");
    expect((text.match(/: keep-alive\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(hub.subscriberCount).toBe(1);
    hub.close();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    expect(hub.subscriberCount).toBe(0);
  });
});
