/**
 * Device identity against the real server and real sockets: a registration
 * that presents an approved device's machine id without its key (a takeover
 * attempt) never touches the device and is audited and notified; a stolen
 * device token or a replayed hello gets nothing; agent restarts, lost tokens
 * (re-registration proving the key), server restarts and re-keys keep working;
 * a reset or withdrawn approval cuts the device off within one second, and a
 * device that is not approved receives no config (PSKs).
 */
import { generateKeyPairSync } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLOSE_CODES, helloProofText, PROTOCOL_VERSION, rekeyProofText } from "@tern/protocol";
import {
  register,
  registerRequest,
  type SimEvent,
  type SimKey,
  Simulator,
  signText,
  simDeviceKey,
} from "@tern/test-harness/src/simulator/index.ts";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { ControlClient } from "../../../agent/src/control/client.ts";
import { keyForChallenge, loadDeviceKey, newDeviceKey, saveDeviceKey } from "../../../agent/src/identity/device-key.ts";
import { inTransaction, systemCtx } from "../../src/services/context.ts";
import { queueConfigJobs } from "../../src/services/desired-config.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { type AdminClient, onboardFleet } from "../support/onboarding.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const g = useGatewayServer();
const fleets: Simulator[] = [];
afterAll(async () => {
  for (const f of fleets) await f.stop();
});

/** Devices of `onboard` take indices from here on: their LANs must not overlap the other tests' devices. */
let nextIndex = 100;

/** Registers `count` simulated routers over HTTP, approves and connects them (as an admin would). */
async function onboard(count = 1) {
  const api = await g.api();
  const onboarded = await onboardFleet(api, g.server.url, count, { startIndex: nextIndex });
  nextIndex += count;
  fleets.push(onboarded.fleet);
  return { api, ...onboarded };
}

/** Another registration token of the organization (a copy of the one installers have). */
async function registrationToken(api: AdminClient): Promise<string> {
  const res = await api.call<{ token: string }>("POST", "/api/tokens", { body: { name: `identity ${Math.random()}` } });
  expect(res.status).toBe(201);
  return res.body.token;
}

const deviceRow = (id: string) =>
  g.database.db
    .selectFrom("devices")
    .select(["is_approved", "public_key", "device_token_hash", "machine_id", "connection"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

/** Events of one simulated device (position 0 of `fleet`) from now on. */
function record(fleet: Simulator, type: SimEvent["type"]): SimEvent[] {
  const seen: SimEvent[] = [];
  fleet.on((e) => {
    if (e.type === type) seen.push(e);
  });
  return seen;
}

function rekeyMessage(nonce: string, deviceId: string, current: SimKey, next: SimKey) {
  const text = rekeyProofText({ nonce, deviceId, publicKey: next.publicKey });
  return {
    type: "rekey",
    publicKey: next.publicKey,
    signature: signText(current.privateKey, text),
    newKeySignature: signText(next.privateKey, text),
  };
}

describe("device identity", () => {
  it("a registration with an approved device's machine id but without its key becomes a new pending device, audited and notified", async () => {
    const { api, fleet, devices } = await onboard();
    const victim = devices[0]!;
    const before = await deviceRow(victim.id);
    const closes = record(fleet, "closed");

    // The attacker has a registration token and the machine id, not the router's key.
    const attacker = Simulator.create({
      server: g.server.url,
      token: await registrationToken(api),
      count: 1,
      machinePrefix: fleet.options.machinePrefix,
      startIndex: fleet.options.startIndex,
      identitySeed: "attacker",
      connect: false,
      reconnect: false,
    });
    fleets.push(attacker);
    const applies = record(attacker, "apply");
    await attacker.registerAll();
    const intruder = attacker.device(0);
    expect(intruder.deviceId).not.toBe(victim.id);
    expect(intruder.approved).toBe(false);

    // The approved device is untouched: same key, same token, still approved and online.
    expect(await deviceRow(victim.id)).toEqual(before);
    expect(before.public_key).toBe(fleet.device(0).key().publicKey);
    expect(await deviceRow(intruder.deviceId!)).toMatchObject({
      is_approved: false,
      machine_id: before.machine_id,
      public_key: intruder.key().publicKey,
    });

    const audit = await g.database.db
      .selectFrom("audit_log")
      .select(["action", "after", "actor"])
      .where("resource_id", "=", victim.id)
      .where("action", "=", "identity-conflict")
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.after).toMatchObject({ newDeviceId: intruder.deviceId, machineId: before.machine_id });

    const notification = await waitUntil(
      () =>
        g.database.db
          .selectFrom("notifications")
          .select(["event_type", "severity", "details", "title"])
          .where("device_id", "=", victim.id)
          .where("event_type", "=", "device-identity-conflict")
          .executeTakeFirst(),
      (n) => n !== undefined,
      5000,
      "the identity conflict notification",
    );
    expect(notification).toMatchObject({ severity: "critical", title: "Device identity conflict" });
    expect(notification!.details).toContain(intruder.deviceId!);
    const listed = await api.call<{ eventType: string; deviceId: string }[]>("GET", "/api/notifications");
    expect(listed.body).toContainEqual(expect.objectContaining({ eventType: "device-identity-conflict", deviceId: victim.id }));

    // The new device is pending: its websocket is refused, it never gets a config.
    await expect(intruder.connect()).rejects.toThrow(/closed before welcome/);
    expect(intruder.lastError ?? "").toMatch(/403/);
    expect(applies).toEqual([]);
    expect(fleet.device(0).ready).toBe(true);
    expect(g.server.gateway.isConnectedHere(victim.id)).toBe(true);
    expect(closes).toEqual([]);
  });

  it("a stolen device token without the key, or a hello replayed from another link, is refused and replaces nothing", async () => {
    const { fleet, devices } = await g.fleet(1, { queueConfig: false });
    const victim = devices[0]!;
    const d = fleet.device(0);
    const closes = record(fleet, "closed");
    const wsUrl = `${g.server.url.replace(/^http/, "ws")}/api/connect/ws`;

    const stolen = await openRawLink(g.server.url, victim.token, { id: victim.id, key: simDeviceKey("thief", 0) });
    stolen.send(helloFor(victim.machineId));
    expect((await stolen.next("error")).code).toBe("IDENTITY_PROOF_INVALID");
    expect(await stolen.closed).toEqual({ code: CLOSE_CODES.unauthenticated, reason: "device identity not proven" });

    // A hello signed by the right key, but over another link's challenge, is no use either.
    const first = await openRawLink(g.server.url, victim.token);
    const second = await openRawLink(g.server.url, victim.token);
    const text = helloProofText({ nonce: first.challenge.nonce, deviceId: victim.id, machineId: victim.machineId, url: wsUrl });
    second.send({
      ...helloFor(victim.machineId),
      proof: { publicKey: victim.key.publicKey, url: wsUrl, signature: signText(victim.key.privateKey, text) },
    });
    expect((await second.next("error")).code).toBe("IDENTITY_PROOF_INVALID");
    expect((await second.closed).code).toBe(CLOSE_CODES.unauthenticated);
    first.ws.close();

    // Signed for another server's address (a relay in the middle) is refused too.
    const relayed = await openRawLink(g.server.url, victim.token);
    const elsewhere = "wss://tern.example.net/api/connect/ws";
    const relayedText = helloProofText({
      nonce: relayed.challenge.nonce,
      deviceId: victim.id,
      machineId: victim.machineId,
      url: elsewhere,
    });
    relayed.send({
      ...helloFor(victim.machineId),
      proof: { publicKey: victim.key.publicKey, url: elsewhere, signature: signText(victim.key.privateKey, relayedText) },
    });
    expect((await relayed.next("error")).message).toMatch(/signed for tern.example.net/);

    // A hello without any proof (an old agent) is refused the same way.
    const bare = await openRawLink(g.server.url, victim.token);
    bare.send(helloFor(victim.machineId));
    expect((await bare.next("error")).code).toBe("IDENTITY_PROOF_INVALID");

    expect(d.ready).toBe(true);
    expect(closes).toEqual([]);
    expect(g.server.gateway.link(victim.id)?.state).toBe("ready");
  });

  it("keeps working across an agent restart, a lost device token (registering again with the key) and a server restart; a replayed or stale registration is refused", async () => {
    const { api, fleet, devices } = await onboard();
    const device = devices[0]!;
    const d = fleet.device(0);

    // Agent restart.
    await d.disconnect();
    await d.connect();
    expect(d.ready).toBe(true);

    // Lost token: the same key registers again and is the same, still approved, device.
    const token = await registrationToken(api);
    const body = registerRequest(token, fleet.options.machinePrefix, d.index, "0.1.0-sim", d.key());
    const replacedLink = d.waitFor("closed", { timeoutMs: 5000 });
    const again = await register(g.server.url, body);
    expect(again).toMatchObject({ deviceId: device.id, isApproved: true });
    // The new token replaces the old one, whose link is closed (the agent would now use the new one).
    expect((await replacedLink).code).toBe(CLOSE_CODES.unauthenticated);
    // The same signed registration a second time (a replay) is refused.
    const replay = await fetch(`${g.server.url}/api/connect/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { code: string }).code).toBe("IDENTITY_PROOF_INVALID");
    // So is one signed long ago, and one whose signature is not the presented key's.
    const stale = registerRequest(
      token,
      fleet.options.machinePrefix,
      d.index,
      "0.1.0-sim",
      d.key(),
      PROTOCOL_VERSION,
      Date.now() - 3_600_000,
    );
    const forged = { ...body, identity: { ...body.identity, at: Date.now(), publicKey: simDeviceKey("x", 1).publicKey } };
    for (const bad of [stale, forged]) {
      const res = await api.call<{ code: string }>("POST", "/api/connect/register", { body: bad });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("IDENTITY_PROOF_INVALID");
    }
    expect((await deviceRow(device.id)).is_approved).toBe(true);

    d.useCredentials(again);
    await d.connect();
    expect(d.ready).toBe(true);

    // Server restart: the device reconnects and proves its key to the new process.
    await g.restart();
    await waitUntil(() => d.ready && g.server.gateway.link(device.id)?.state === "ready", Boolean, 15_000, "reconnect");
  });

  it("re-keys over the link: the old key proves the new one, after which only the new key is accepted", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const device = devices[0]!;
    const next = simDeviceKey("rekeyed", 0);
    const link = await openRawLink(g.server.url, device.token, device);
    link.send(helloFor(device.machineId));
    await link.next("welcome");

    // A re-key the new key did not sign is refused, and the key stays.
    link.send({
      ...rekeyMessage(link.challenge.nonce, device.id, device.key, next),
      newKeySignature: signText(device.key.privateKey, "x"),
    });
    expect((await link.next("error")).code).toBe("IDENTITY_PROOF_INVALID");
    expect((await deviceRow(device.id)).public_key).toBe(device.key.publicKey);

    link.send(rekeyMessage(link.challenge.nonce, device.id, device.key, next));
    expect(await link.next("rekeyed")).toEqual({ type: "rekeyed", publicKey: next.publicKey });
    expect((await deviceRow(device.id)).public_key).toBe(next.publicKey);
    const audit = await g.database.db
      .selectFrom("audit_log")
      .select("after")
      .where("resource_id", "=", device.id)
      .where("action", "=", "rekey")
      .executeTakeFirstOrThrow();
    expect(audit.after).toEqual({ publicKey: next.publicKey });
    link.ws.close();
    await link.closed;

    const old = await openRawLink(g.server.url, device.token, device);
    expect(old.challenge.publicKey).toBe(next.publicKey);
    old.send(helloFor(device.machineId));
    expect((await old.next("error")).code).toBe("IDENTITY_PROOF_INVALID");
    const fresh = await openRawLink(g.server.url, device.token, { id: device.id, key: next });
    fresh.send(helloFor(device.machineId));
    await fresh.next("welcome");
    fresh.ws.close();
  });

  it("the agent's control client re-keys against the server, and an interrupted re-key still connects", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const device = devices[0]!;
    const dir = await mkdtemp(join(tmpdir(), "tern-identity-"));
    const paths = { deviceKey: join(dir, "device-key.pem"), deviceKeyNext: join(dir, "device-key.next.pem") };
    await saveDeviceKey(paths.deviceKey, { privateKey: device.key.privateKey, publicKey: device.key.publicKey });
    const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log } as never;
    const client = () =>
      new ControlClient({
        url: `${g.server.url.replace(/^http/, "ws")}/api/connect/ws`,
        token: device.token,
        deviceId: device.id,
        key: (serverKey) => keyForChallenge(paths, serverKey),
        log,
        backoff: { initialMs: 50, maxMs: 200, factor: 2 },
        handlers: {
          hello: () => ({
            protocolVersion: PROTOCOL_VERSION,
            agentVersion: "test",
            machineId: device.machineId,
            hostname: "h",
            appliedHash: null,
          }),
          welcome: () => {},
          apply: async () => ({ ok: true, appliedHash: null, rolledBack: false, drivers: [] }),
          request: async () => ({}),
        },
      });
    try {
      const a = client();
      a.start();
      await waitUntil(() => a.connected, Boolean, 10_000, "the agent to connect");
      const next = newDeviceKey();
      await saveDeviceKey(paths.deviceKeyNext, next);
      await a.rekey(next);
      await a.stop();
      expect((await deviceRow(device.id)).public_key).toBe(next.publicKey);

      // The agent stopped before it renamed the new key into place: the server's challenge names the new key.
      expect((await stat(paths.deviceKeyNext)).mode & 0o777).toBe(0o600);
      const b = client();
      b.start();
      await waitUntil(() => b.connected, Boolean, 10_000, "the agent to connect with the new key");
      await b.stop();
      expect((await loadDeviceKey(paths.deviceKey))?.publicKey).toBe(next.publicKey);
      await expect(readFile(paths.deviceKeyNext)).rejects.toThrow();

      // A key file others can read is refused rather than used.
      await chmod(paths.deviceKey, 0o644);
      await expect(loadDeviceKey(paths.deviceKey)).rejects.toThrow(/readable by others/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("resetting a device's identity cuts it off within a second; it must register again and be approved again", async () => {
    const { api, fleet, devices } = await onboard();
    const device = devices[0]!;
    const d = fleet.device(0);
    const closed = d.waitFor("closed", { timeoutMs: 5000 });
    const t0 = performance.now();
    const reset = await api.call<{ isApproved: boolean }>("POST", `/api/devices/${device.id}/identity/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body.isApproved).toBe(false);
    expect((await closed).code).toBe(CLOSE_CODES.notApproved);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await deviceRow(device.id)).toMatchObject({ is_approved: false, public_key: null });
    const audit = await g.database.db
      .selectFrom("audit_log")
      .select("actor")
      .where("resource_id", "=", device.id)
      .where("action", "=", "identity-reset")
      .execute();
    expect(audit).toHaveLength(1);

    // Its old token no longer opens a link; it cannot be approved before it registers with a key.
    await expect(d.connect()).rejects.toThrow(/closed before welcome/);
    const early = await api.call<{ code: string }>("PUT", `/api/devices/${device.id}`, { body: { isApproved: true } });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe("CONFLICT");

    // The router (here with a new key: a new disk) registers again and takes the device over, pending.
    const replaced = Simulator.create({
      server: g.server.url,
      token: await registrationToken(api),
      count: 1,
      machinePrefix: fleet.options.machinePrefix,
      startIndex: fleet.options.startIndex,
      identitySeed: "new-disk",
      connect: false,
      reconnect: false,
    });
    fleets.push(replaced);
    await replaced.registerAll();
    const router = replaced.device(0);
    expect(router.deviceId).toBe(device.id);
    expect(router.approved).toBe(false);
    expect((await deviceRow(device.id)).public_key).toBe(router.key().publicKey);
    const approved = await api.call("PUT", `/api/devices/${device.id}`, { body: { isApproved: true } });
    expect(approved.status).toBe(202);
    await router.connect();
    expect(router.ready).toBe(true);
    await router.disconnect();

    // Security: another tenant's device is not found; a reset needs the put permission on devices.
    const foreign = await api.call<{ code: string }>("POST", "/api/devices/00000000-0000-4000-8000-000000000000/identity/reset");
    expect(foreign.status).toBe(404);
  });

  it("a device whose approval is withdrawn is cut off within a second and receives no config, even one queued with the withdrawal", async () => {
    const { fleet, devices } = await onboard();
    const device = devices[0]!;
    await g.waitForJobs(devices[0]!.jobIds, "complete");
    const d = fleet.device(0);
    const applies = record(fleet, "apply");
    const closed = d.waitFor("closed", { timeoutMs: 5000 });
    const t0 = performance.now();
    // One transaction queues a new config (with the tunnel PSKs it may hold) and withdraws the approval:
    // the dispatcher checks the approval with the row locked before anything is sent.
    await inTransaction(systemCtx(g.server.deps, g.org), async (tx) => {
      await queueConfigJobs(tx, { deviceIds: [device.id], type: "sync", force: true, tasks: [{ kind: "t", summary: "t" }] });
      await tx.db.updateTable("devices").set({ is_approved: false }).where("id", "=", device.id).execute();
    });
    expect((await closed).code).toBe(CLOSE_CODES.notApproved);
    expect(performance.now() - t0).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(applies).toEqual([]);
    // Not approved: the upgrade itself is refused.
    await expect(d.connect()).rejects.toThrow(/closed before welcome/);
  });

  it("the dispatcher checks the approval when it sends: a withdrawal whose notification was missed still gets no config", async () => {
    const { fleet, devices } = await onboard();
    const device = devices[0]!;
    await g.waitForJobs(device.jobIds, "complete");
    const applies = record(fleet, "apply");
    const closed = fleet.device(0).waitFor("closed", { timeoutMs: 5000 });
    // As if the bus had lost both notifications (it reconnects and sweeps for queued jobs later):
    // the triggers are off for this transaction, so only the dispatcher stands between the config and the device.
    await inTransaction(systemCtx(g.server.deps, g.org), async (tx) => {
      await sql`set local session_replication_role = replica`.execute(tx.db);
      await queueConfigJobs(tx, { deviceIds: [device.id], type: "sync", force: true, tasks: [{ kind: "t", summary: "t" }] });
      await tx.db.updateTable("devices").set({ is_approved: false }).where("id", "=", device.id).execute();
    });
    const conn = g.server.gateway.link(device.id);
    expect(conn?.state).toBe("ready");
    await g.server.gateway.engine.dispatch(conn!);
    expect((await closed).code).toBe(CLOSE_CODES.notApproved);
    expect(applies).toEqual([]);
  });

  it.skipIf(testDatabaseKind() !== "postgres")(
    "a reset on one server instance cuts off the device's link on another within a second",
    async () => {
      const other = await g.startAnother();
      const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
      const device = devices[0]!;
      const link = await openRawLink(other.url, device.token, device);
      link.send(helloFor(device.machineId));
      await link.next("welcome");
      const api = await g.api();
      const t0 = performance.now();
      expect((await api.call("POST", `/api/devices/${device.id}/identity/reset`)).status).toBe(200);
      expect((await link.closed).code).toBe(CLOSE_CODES.notApproved);
      expect(performance.now() - t0).toBeLessThan(1000);
    },
  );
});

// A key pair made by node:crypto directly has the protocol's encoding (the agent makes its keys this way).
it("encodes an Ed25519 public key as 43 base64url characters", () => {
  const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }) as { x: string };
  expect(jwk.x).toMatch(/^[A-Za-z0-9_-]{43}$/);
});
