/**
 * What the device endpoint does with bad input: each case is refused with a
 * clear reason (HTTP status and JSON body at the upgrade, an `error` message
 * or a close code and reason on the link), and a well-behaved simulated device
 * connected all along keeps working.
 */
import { CLOSE_CODES, MAX_MESSAGE_BYTES, type Status } from "@tern/protocol";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { beforeAll, describe, expect, it } from "vitest";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink, type UpgradeRefusal } from "../support/raw-link.ts";

const g = useGatewayServer();
let good: { fleet: Simulator; device: SimRow };
let raw: SimRow[];

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail("the upgrade was accepted"),
    (e: UpgradeRefusal) => e,
  );

function status(fields: Partial<Status> = {}): Status {
  return {
    type: "status",
    at: new Date().toISOString(),
    appliedHash: null,
    applying: false,
    tunnels: [],
    interfaces: [],
    bgp: null,
    vrrp: [],
    health: null,
    ...fields,
  };
}

async function welcomed(device: SimRow) {
  const link = await openRawLink(g.server.url, device.token, device);
  link.send(helloFor(device.machineId));
  await link.next("welcome");
  return link;
}

beforeAll(async () => {
  const { fleet, devices } = await g.fleet(1);
  good = { fleet, device: devices[0]! };
  raw = (await g.fleet(4, { connect: false, queueConfig: false })).devices;
});

describe("bad websocket input", () => {
  it("refuses a missing or unknown token with 401 and a JSON reason", async () => {
    const none = await refusal(openRawLink(g.server.url, null));
    expect(none).toEqual({
      status: 401,
      body: expect.objectContaining({ code: "UNAUTHENTICATED", error: expect.stringMatching(/Bearer/) }),
    });
    const wrong = await refusal(openRawLink(g.server.url, "tern_dt_not-a-token"));
    expect(wrong).toEqual({
      status: 401,
      body: expect.objectContaining({ code: "UNAUTHENTICATED", error: "unknown device token" }),
    });
    // Only device tokens open a device link: the admin's access JWT does not.
    const login = await fetch(`${g.server.url}/api/users/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    expect(accessToken).toBeTruthy();
    const jwt = await refusal(openRawLink(g.server.url, accessToken));
    expect(jwt).toEqual({ status: 401, body: expect.objectContaining({ code: "UNAUTHENTICATED" }) });
  });

  it("refuses a device that is not approved with 403", async () => {
    const { devices } = await g.fleet(1, { connect: false, approved: false });
    const r = await refusal(openRawLink(g.server.url, devices[0]!.token, devices[0]!));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: "FORBIDDEN", error: expect.stringMatching(/not approved/) });
  });

  it("answers malformed JSON, binary frames and invalid messages with an error and keeps the link", async () => {
    const link = await openRawLink(g.server.url, raw[0]!.token, raw[0]!);
    link.send("{not json");
    const notJson = await link.next("error");
    expect(notJson).toMatchObject({ code: "BAD_MESSAGE", message: expect.stringMatching(/not JSON/) });
    link.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    await link.next("error", (m) => /binary/.test(m.message));
    // The link is still usable: hello, welcome, then a status with a bad field.
    link.send(helloFor(raw[0]!.machineId));
    await link.next("welcome");
    link.send({ ...status(), tunnels: [{ id: "t", up: true, loss: 250, rtt: 1, jitter: 1, samples: 1 }] });
    const invalid = await link.next("error", (m) => m.code === "VALIDATION_FAILED");
    expect(invalid.message).toMatch(/tunnels\.0\.loss/);
    // A NUL (the database refuses it in text) and a hostile nesting depth: refused before the schema, the link kept.
    link.send({ ...status(), interfaces: [{ name: "eth\u00000" }] });
    await link.next(
      "error",
      (m) => m.code === "VALIDATION_FAILED" && /interfaces\.0\.name: must not contain a NUL/.test(m.message),
    );
    link.send(`{"type":"status","x":${"[".repeat(50_000)}${"]".repeat(50_000)}}`);
    await link.next("error", (m) => m.code === "VALIDATION_FAILED" && /nested deeper/.test(m.message));
    link.send({ type: "no-such-type" });
    await link.next("error", (m) => m.code === "VALIDATION_FAILED" && /no-such-type/.test(m.message));
    expect(link.ws.readyState).toBe(link.ws.OPEN);
    link.ws.close();
    await link.closed;
  });

  it("requires hello first", async () => {
    const link = await openRawLink(g.server.url, raw[1]!.token, raw[1]!);
    link.send(status());
    const err = await link.next("error");
    expect(err.code).toBe("HELLO_REQUIRED");
    expect(await link.closed).toEqual({ code: CLOSE_CODES.badMessage, reason: "hello expected first" });
  });

  it("refuses an unsupported protocol version, naming the accepted ones", async () => {
    const link = await openRawLink(g.server.url, raw[1]!.token, raw[1]!);
    link.send(helloFor(raw[1]!.machineId, { protocolVersion: 99 }));
    const err = await link.next("error");
    expect(err).toEqual({
      type: "error",
      code: "UNSUPPORTED_PROTOCOL_VERSION",
      message: "protocol version 99 is not supported; this server accepts 2",
    });
    expect(await link.closed).toEqual({
      code: CLOSE_CODES.protocolVersion,
      reason: "unsupported protocol version 99; accepted: 2",
    });
  });

  it("refuses a hello whose machine id is not the token's device", async () => {
    const link = await openRawLink(g.server.url, raw[1]!.token, raw[1]!);
    link.send(helloFor(raw[2]!.machineId));
    expect(await link.closed).toEqual({
      code: CLOSE_CODES.unauthenticated,
      reason: "machine id does not match this device token",
    });
    const row = await g.database.db
      .selectFrom("devices")
      .select("connection")
      .where("id", "=", raw[1]!.id)
      .executeTakeFirstOrThrow();
    expect(row.connection).toBe("never");
  });

  it("closes a link that sends a message over the size limit (1009)", async () => {
    const link = await welcomed(raw[2]!);
    link.send(JSON.stringify({ ...status(), pad: "x".repeat(MAX_MESSAGE_BYTES) }));
    expect((await link.closed).code).toBe(1009);
  });

  it("refuses answers to requests and applies it never sent", async () => {
    const link = await welcomed(raw[3]!);
    link.send({ type: "response", id: "never-sent", ok: true, result: {} });
    expect(await link.next("error", (m) => m.code === "UNKNOWN_ID")).toMatchObject({
      message: expect.stringMatching(/never-sent/),
    });
    link.send({ type: "apply-result", id: "not-an-apply", ok: true, appliedHash: "x", rolledBack: false, drivers: [] });
    await link.next("error", (m) => m.code === "UNKNOWN_ID" && /not-an-apply/.test(m.message));
    const row = await g.database.db
      .selectFrom("devices")
      .select("applied_hash")
      .where("id", "=", raw[3]!.id)
      .executeTakeFirstOrThrow();
    expect(row.applied_hash).toBeNull();
    link.ws.close();
    await link.closed;
  });

  it("ignores another device's tunnels in a status", async () => {
    const { id: theirs } = await g.tunnel(good.device, raw[0]!, { queue: false });
    const { id: notMine } = await g.tunnel(good.device, raw[1]!, { queue: false });
    const link = await welcomed(raw[0]!);
    const report = (id: string) => ({ id, up: true, loss: 0, rtt: 5, jitter: 1, samples: 10 });
    link.send(status({ tunnels: [report(theirs), report(notMine)] }));
    const samples = await waitUntil(
      () => g.database.db.selectFrom("tunnel_samples").selectAll().where("device_id", "=", raw[0]!.id).execute(),
      (rows) => rows.length > 0,
    );
    expect(samples.map((s) => [s.tunnel_id, s.side])).toEqual([[theirs, "b"]]);
    expect(
      await g.database.db.selectFrom("tunnel_samples").select("tunnel_id").where("tunnel_id", "=", notMine).execute(),
    ).toEqual([]);
    link.ws.close();
    await link.closed;
  });

  it("rate-limits a device that floods, with an error message", async () => {
    const link = await welcomed(raw[0]!);
    for (let i = 0; i < 400; i++) link.send(status());
    const err = await link.next("error", (m) => m.code === "RATE_LIMITED");
    expect(err.message).toMatch(/too many messages/);
    expect(link.ws.readyState).toBe(link.ws.OPEN);
    link.ws.close();
    await link.closed;
  });

  it("kept the well-behaved device working through all of it", async () => {
    const sim = good.fleet.device(0);
    expect(sim.ready).toBe(true);
    const jobIds = await g.change(good.device.id);
    await g.waitForJobs(jobIds, "complete");
    expect(sim.sendStatus()).toBe(true);
    await waitUntil(
      () =>
        g.database.db.selectFrom("device_state").select("reported_at").where("device_id", "=", good.device.id).executeTakeFirst(),
      (r) => !!r?.reported_at,
    );
    const metrics = await (await fetch(`${g.server.url}/metrics`)).text();
    for (const kind of [
      "unauthenticated",
      "not-approved",
      "not-json",
      "invalid",
      "protocol-version",
      "machine-id",
      "oversized",
      "unknown-id",
      "foreign-tunnel",
      "rate-limited",
      "hello-required",
    ]) {
      expect(metrics, kind).toMatch(new RegExp(`tern_ws_errors_total\\{kind="${kind}"\\} [1-9]`));
    }
  });
});
