/**
 * Events reach a stream in the order their transactions commit, which is not
 * the order of their journal ids (taken from a sequence when the change is
 * made): every event goes out, none is held back or dropped for its id; an
 * event both replayed after Last-Event-ID and delivered live goes out once.
 */
import type { LiveEvent } from "@tern/protocol";
import { ROLE_PERMISSIONS } from "@tern/protocol";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";
import { toJson } from "../../db/json.ts";
import { LiveEventHub } from "./hub.ts";
import { runEventStream } from "./stream.ts";

const t = useTestServer();

const jobEvent = (n: number): LiveEvent => ({
  kind: "job",
  action: "updated",
  id: `job-${n}`,
  at: new Date().toISOString(),
  data: { status: "complete" },
});

/** A hub fed by hand (as the `tern_live` channel would), a stream on it, and the ids the client read. */
async function openStream(lastEventId?: string) {
  let notify: (payload: string) => void = () => {};
  const hub = new LiveEventHub(
    t.database.db,
    {
      on: (_channel: string, handler: (payload: string) => void) => {
        notify = handler;
      },
    },
    pino({ level: "silent" }),
  );
  const app = new Hono();
  app.get("/events", (c) =>
    streamSSE(c, (stream) =>
      runEventStream(stream, hub, { orgId: t.admin.orgId, permissions: ROLE_PERMISSIONS.viewer, lastEventId }),
    ),
  );
  const res = await app.request("/events");
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const readUntil = async (done: (text: string) => boolean) => {
    while (!done(text)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    return [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
  };
  await readUntil((s) => s.includes(": connected"));
  const deliver = (id: number) => notify(JSON.stringify({ id, org: t.admin.orgId, event: jobEvent(id) }));
  return { hub, deliver, readUntil };
}

describe("event stream order", () => {
  it("passes on an event that commits after one with a higher id", async () => {
    const s = await openStream();
    for (const id of [5_000_002, 5_000_001, 5_000_003]) s.deliver(id);
    const ids = await s.readUntil((text) => text.includes("id: 5000003"));
    expect(ids).toEqual(["5000002", "5000001", "5000003"]);
    s.hub.close();
  });

  it("replays the journal after Last-Event-ID, then live events, each once", async () => {
    const mark = await t.database.db
      .selectFrom("live_events")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst();
    const after = String(mark?.id ?? "0");
    const journaled = await t.database.db
      .insertInto("live_events")
      .values([1, 2].map(() => ({ organization_id: t.admin.orgId, event: toJson(jobEvent(0)) })))
      .returning("id")
      .execute();
    const [first, second] = journaled.map((r) => Number(r.id)) as [number, number];
    const s = await openStream(after);
    // The second journaled event's NOTIFY comes after the replay (sent once), then a live event whose id is
    // below both (its transaction began first and committed last: sent), then a later one.
    s.deliver(second);
    s.deliver(Number(after));
    s.deliver(second + 1_000);
    const ids = await s.readUntil((text) => text.includes(`id: ${second + 1_000}`));
    expect(ids).toEqual([first, second, Number(after), second + 1_000].map(String));
    s.hub.close();
  });
});
