/**
 * A live event announces a change that is already committed: a console that
 * refetches the moment the event arrives reads the new state (it used to read
 * the tunnel's previous status, because the tunnel event was journaled when
 * the status came in and the batched writer stored it up to a flush interval
 * later — and no later event corrected it). The flush interval is long here
 * (1 s) so that a premature event is caught every time.
 */
import type { Device, Tunnel } from "@tern/protocol";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { type AdminClient, TEST_ADMIN } from "../support/onboarding.ts";
import { openSse, type SseClient, type SseEvent } from "../support/sse.ts";

const g = useGatewayServer({ TERN_INGEST_FLUSH_MS: "1000" });
let api: AdminClient;
const open: SseClient[] = [];

beforeAll(async () => {
  api = await g.api();
});
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

async function stream(): Promise<SseClient> {
  const login = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  expect(login.status).toBe(200);
  const { accessToken } = (await login.json()) as { accessToken: string };
  const client = await openSse(`${g.server.url}/api/events`, { authorization: `Bearer ${accessToken}` });
  open.push(client);
  expect(client.status).toBe(200);
  return client;
}

/** The next event (after those seen so far) matching `match`. */
function next(client: SseClient, match: (e: SseEvent) => boolean): Promise<SseEvent> {
  const seen = new Set(client.events);
  return client.waitFor((e) => !seen.has(e) && match(e));
}

const tunnelHint = (e: SseEvent, id: string, status: string) =>
  e.data.kind === "tunnel" && e.data.id === id && e.data.data?.status === status;
const readTunnel = async (id: string) => (await api.call<Tunnel>("GET", `/api/tunnels/${id}`)).body;
const latestUp = async (tunnelId: string, side: "a" | "b") =>
  (
    await g.database.db
      .selectFrom("tunnel_latest")
      .select("up")
      .where("tunnel_id", "=", tunnelId)
      .where("side", "=", side)
      .executeTakeFirst()
  )?.up;

describe("live events come after the write they announce", () => {
  it("a tunnel event: the tunnel read at once already has the reported status", async () => {
    const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
    const [a, b] = [fleet.device(0), fleet.device(1)];
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 2,
    );
    const { id, jobIds } = await g.tunnel(devices[0]!, devices[1]!);
    await g.waitForJobs(jobIds, "complete");
    a.setTunnelMetrics({ up: true });
    b.setTunnelMetrics({ up: true });
    a.sendStatus();
    b.sendStatus();
    await waitUntil(
      () => readTunnel(id),
      (t) => t.status === "Connected",
    );
    const client = await stream();

    // A's end goes down: the event's refetch must see it.
    const down = next(client, (e) => tunnelHint(e, id, "Not Connected"));
    a.setTunnelMetrics({ up: false });
    a.sendStatus();
    await down;
    expect(await latestUp(id, "a")).toBe(false);
    expect(await readTunnel(id)).toMatchObject({ status: "Not Connected", tunnelStatusA: "down", tunnelStatusB: "up" });

    // And back up.
    const up = next(client, (e) => tunnelHint(e, id, "Connected"));
    a.setTunnelMetrics({ up: true });
    a.sendStatus();
    await up;
    expect(await latestUp(id, "a")).toBe(true);
    expect(await readTunnel(id)).toMatchObject({ status: "Connected", tunnelStatusA: "up", tunnelStatusB: "up" });

    // A report that changes nothing announces nothing.
    const quiet = client.events.length;
    a.sendStatus();
    // Longer than a flush interval: the report is written by then.
    await new Promise((r) => setTimeout(r, 1500));
    expect(client.events.slice(quiet).filter((e) => e.data.kind === "tunnel" && e.data.id === id)).toEqual([]);
  });

  it("the internal live-state-written event: the device's state and its tunnel ends are in the database", async () => {
    const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
    const [a] = [fleet.device(0)];
    await waitUntil(
      () => fleet.stats().applied,
      (n) => n === 2,
    );
    const { id, jobIds } = await g.tunnel(devices[0]!, devices[1]!);
    await g.waitForJobs(jobIds, "complete");
    const checks: Promise<void>[] = [];
    const written: GatewayEventMap["live-state-written"][] = [];
    const off = g.server.gateway.events.on("live-state-written", (e) => {
      written.push(e);
      // Read in the handler itself: nothing may be waiting to be written.
      for (const end of e.tunnelEnds.filter((t) => t.tunnelId === id)) {
        checks.push(latestUp(id, end.side).then((up) => expect(up).toBe(end.up)));
      }
    });
    try {
      for (const up of [false, true, false]) {
        a.setTunnelMetrics({ up });
        a.sendStatus();
        await waitUntil(
          async () => written.flatMap((w) => w.tunnelEnds).filter((t) => t.tunnelId === id && t.up === up).length,
          (n) => n > 0,
        );
        written.length = 0;
      }
    } finally {
      off();
    }
    expect(checks.length).toBeGreaterThanOrEqual(3);
    await Promise.all(checks);
  });

  it("device online/offline events: the device read at once has the announced connection", async () => {
    const { fleet, devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const client = await stream();
    const online = next(
      client,
      (e) => e.data.kind === "device" && e.data.id === devices[0]!.id && e.data.data?.isConnected === true,
    );
    await fleet.connectAll();
    await online;
    expect((await api.call<Device>("GET", `/api/devices/${devices[0]!.id}`)).body.isConnected).toBe(true);
    const offline = next(
      client,
      (e) => e.data.kind === "device" && e.data.id === devices[0]!.id && e.data.data?.isConnected === false,
    );
    await fleet.device(0).disconnect();
    await offline;
    expect((await api.call<Device>("GET", `/api/devices/${devices[0]!.id}`)).body.isConnected).toBe(false);
  });
});
