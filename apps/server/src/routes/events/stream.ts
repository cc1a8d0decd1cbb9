import { z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { runEventStream } from "../../services/live-events/stream.ts";

export const route = defineRoute({
  method: "get",
  path: "/events",
  operationId: "streamEvents",
  tags: ["events"],
  summary: "Live events of the organization (server-sent events)",
  description:
    'A `text/event-stream` of changes in the organization: each event is an `id:` line (an id from the event journal; events come in the order their changes committed, so an id can be lower than the one before) and a `data:` line holding a LiveEvent JSON (`kind` device, tunnel, job or notification; `action` created, updated or deleted; the resource `id`; `at`; and `data`, summary fields as a hint: refetch the resource). Only kinds the caller may read are sent (the read bit on devices, tunnels, jobs, notifications). Reconnect with `Last-Event-ID` to get the events since (kept for 5 minutes, up to 10,000 per organization); when they are no longer all kept the stream starts with `{kind: "resync", id: "*"}`: refetch everything. A `: keep-alive` comment comes every 15 s. Changes made through any server instance arrive (PostgreSQL LISTEN/NOTIFY). Accepts the console cookie.',
  auth: { resource: "organizations", permission: "get" },
  request: {
    headers: z.object({
      "last-event-id": z.string().max(40).optional().meta({ description: "The id of the last event received" }),
    }),
  },
  responses: {
    200: {
      description: "The event stream",
      content: { "text/event-stream": { schema: z.string().meta({ description: "id: <event id>\\ndata: <LiveEvent JSON>" }) } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, (c) => {
    const hub = c.get("deps").liveEvents;
    if (!hub) throw new ApiError("INTERNAL", "live events are not running on this server");
    const access = c.get("access");
    const lastEventId = c.req.header("last-event-id");
    c.header("cache-control", "no-store");
    // Proxies that buffer responses (nginx) must pass the stream through.
    c.header("x-accel-buffering", "no");
    return streamSSE(c, (stream) =>
      runEventStream(stream, hub, { orgId: access.org.id, permissions: access.permissions, lastEventId }),
    ) as never;
  });
}
