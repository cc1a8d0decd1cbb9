/**
 * GET /api/events over real HTTP against the running server (gateway, bus,
 * triggers): a device coming online arrives live; another tenant's events
 * never do; a key without the read bit on jobs gets no job events;
 * Last-Event-ID replays or asks for a resync; with two instances on
 * PostgreSQL a change made through B reaches a client of A; shutdown ends
 * the streams within the service manager's 10 s.
 */
import type { TokenPair } from "@tern/protocol";
import { ROLE_PERMISSIONS } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { createAccountWithOwner } from "../../src/services/bootstrap.ts";
import { useGatewayServer } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";
import { openSse, type SseClient, type SseEvent } from "../support/sse.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const g = useGatewayServer();
const open: SseClient[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

async function loginAt(url: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as TokenPair).accessToken;
}

async function stream(token: string, options: { org?: string; lastEventId?: string; url?: string } = {}) {
  const url = new URL(`${options.url ?? g.server.url}/api/events`);
  if (options.org) url.searchParams.set("org", options.org);
  const client = await openSse(url.toString(), {
    authorization: `Bearer ${token}`,
    ...(options.lastEventId ? { "last-event-id": options.lastEventId } : {}),
  });
  open.push(client);
  expect(client.status).toBe(200);
  expect(client.contentType).toMatch(/^text\/event-stream/);
  return client;
}

/** The summary fields of an event (none for resync). */
const dataOf = (e: SseEvent): Record<string, unknown> | undefined => ("data" in e.data ? e.data.data : undefined);

const rename = (id: string, name: string) => g.database.db.updateTable("devices").set({ name }).where("id", "=", id).execute();

describe("live events", () => {
  it("a device coming online arrives as a device event with its summary", async () => {
    const token = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const device = devices[0]!;
    const client = await stream(token);
    const link = await openRawLink(g.server.url, device.token, device);
    link.send(helloFor(device.machineId));
    await link.next("welcome");
    const event = await client.waitFor((e) => e.data.kind === "device" && e.data.id === device.id);
    expect(event.id).toMatch(/^\d+$/);
    expect(event.data).toMatchObject({ kind: "device", action: "updated", data: { isConnected: true, isApproved: true } });
    expect(Date.parse(event.data.at)).not.toBeNaN();
    link.ws.close();
    await client.waitFor((e) => e.data.kind === "device" && e.data.id === device.id && dataOf(e)?.isConnected === false);
  });

  it("another tenant's events never arrive, its own do", async () => {
    const otherEmail = `other-${Date.now()}@example.com`;
    const other = await createAccountWithOwner(g.database.db, {
      accountName: "Other",
      orgName: "Other org",
      email: otherEmail,
      password: "other tenant password",
      passwordHashCost: 10,
    });
    const adminToken = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
    const otherToken = await loginAt(g.server.url, otherEmail, "other tenant password");
    const theirs = await stream(otherToken);
    // Naming tenant A's organization is refused before any stream opens.
    const refused = await fetch(`${g.server.url}/api/events?org=${g.org.id}`, {
      headers: { authorization: `Bearer ${otherToken}` },
    });
    expect([403, 404]).toContain(refused.status);
    const ours = await stream(adminToken);

    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    await rename(devices[0]!.id, "tenant-a-secret-name");
    await ours.waitFor(
      (e) => e.data.kind === "device" && e.data.id === devices[0]!.id && dataOf(e)?.name === "tenant-a-secret-name",
    );
    // A marker in the other tenant, after tenant A's change: when it has arrived, A's would have too.
    await g.database.db
      .insertInto("notifications")
      .values({
        id: crypto.randomUUID(),
        organization_id: other.orgId,
        device_id: null,
        event_type: "marker",
        title: "marker",
        details: "",
        severity: "info" as never,
        targets: JSON.stringify({ deviceId: null, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: `marker-${Date.now()}`,
      })
      .execute();
    await theirs.waitFor((e) => e.data.kind === "notification" && dataOf(e)?.title === "marker");
    expect(JSON.stringify(theirs.events)).not.toContain(devices[0]!.id);
    expect(JSON.stringify(theirs.events)).not.toContain("tenant-a-secret-name");
  });

  it("a key without the read bit on jobs gets no job events (and other kinds still)", async () => {
    const token = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
    const keyRes = await fetch(`${g.server.url}/api/accesstokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `no-jobs-${Date.now()}`, role: "owner", permissions: { ...ROLE_PERMISSIONS.owner, jobs: 0 } }),
    });
    expect(keyRes.status).toBe(201);
    const key = ((await keyRes.json()) as { token: string }).token;
    const withoutJobs = await stream(key);
    const withJobs = await stream(token);
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const jobIds = await g.change(devices[0]!.id);
    expect(jobIds.length).toBeGreaterThan(0);
    await withJobs.waitFor((e) => e.data.kind === "job" && e.data.id === jobIds[0]);
    await rename(devices[0]!.id, "after-the-job");
    await withoutJobs.waitFor((e) => e.data.kind === "device" && dataOf(e)?.name === "after-the-job");
    expect(withoutJobs.events.filter((e) => e.data.kind === "job")).toEqual([]);
  });

  it("Last-Event-ID replays what came after it; an id no longer kept gets one resync event", async () => {
    const token = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const id = devices[0]!.id;
    const first = await stream(token);
    await rename(id, "replay-1");
    const seen = await first.waitFor((e) => e.data.id === id && dataOf(e)?.name === "replay-1");
    first.close();
    await rename(id, "replay-2");
    await rename(id, "replay-3");
    const resumed = await stream(token, { lastEventId: seen.id! });
    await resumed.waitFor((e) => e.data.id === id && dataOf(e)?.name === "replay-3");
    const names = resumed.events.filter((e) => e.data.id === id).map((e) => dataOf(e)?.name);
    expect(names).toEqual(["replay-2", "replay-3"]);
    const ids = resumed.events.map((e) => BigInt(e.id!));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(ids.every((n) => n > BigInt(seen.id!))).toBe(true);

    // Everything up to now pruned: the old id can no longer be replayed.
    await g.database.db.deleteFrom("live_events").execute();
    await rename(id, "after-prune");
    const stale = await stream(token, { lastEventId: seen.id! });
    const resync = await stale.waitFor((e) => e.data.kind === "resync");
    expect(resync.data).toMatchObject({ kind: "resync", action: "updated", id: "*" });
    expect(stale.events.filter((e) => e.data.kind === "resync")).toHaveLength(1);
    const future = await stream(token, { lastEventId: "99999999999" });
    await future.waitFor((e) => e.data.kind === "resync");
  });

  it.skipIf(testDatabaseKind() !== "postgres")(
    "two instances on PostgreSQL: a change made through B reaches a client of A",
    async () => {
      const b = await g.startAnother();
      const token = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
      const client = await stream(token);
      const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
      const tokenB = await loginAt(b.url, TEST_ADMIN.email, TEST_ADMIN.password);
      const res = await fetch(`${b.url}/api/devices/${devices[0]!.id}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${tokenB}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "renamed-on-b" }),
      });
      expect(res.status, await res.text()).toBeLessThan(300);
      await client.waitFor((e) => e.data.id === devices[0]!.id && dataOf(e)?.name === "renamed-on-b");
    },
  );

  it("shutdown ends open streams and still finishes within 10 s", async () => {
    const token = await loginAt(g.server.url, TEST_ADMIN.email, TEST_ADMIN.password);
    const clients = [await stream(token), await stream(token)];
    const started = Date.now();
    await g.restart();
    expect(Date.now() - started).toBeLessThan(10_000);
    await Promise.all(clients.map((c) => c.ended));
  });
});
