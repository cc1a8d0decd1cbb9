/**
 * Agent rollouts end to end on the server: the scheduler duty sends each device its package over its websocket
 * (`upgrade-begin`, `upgrade-chunk` in order, `upgrade-install`), the devices' reports in their status
 * (`status.upgrade`) make them upgraded or rolled back, a refusal fails the device with the agent's reason, a
 * failed canary pauses the rollout, and live events follow each device. The devices are protocol-level
 * clients (the agent's side: apps/agent/test/upgrade).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Rollout, RolloutReport, Status, TokenPair } from "@tern/protocol";
import { UPGRADE_CHUNK_BYTES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { generateSigningKeys, signatureHeaders, signPackageBytes } from "../support/agent-upgrades.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink, type RawLink } from "../support/raw-link.ts";

const g = useGatewayServer();

async function adminToken(): Promise<string> {
  const res = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  return ((await res.json()) as TokenPair).accessToken;
}

async function call<T>(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${g.server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

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

type Behaviour = "commit" | "roll-back" | "refuse";

/**
 * A connected device that takes the package and then reports as `behaviour` says (decided when the package
 * comes, when it is a function); collects what it received.
 */
async function upgradingDevice(device: SimRow, decide: Behaviour | (() => Behaviour)) {
  let behaviour: Behaviour = typeof decide === "function" ? "commit" : decide;
  const raw: RawLink = await openRawLink(g.server.url, device.token, device);
  raw.send(helloFor(device.machineId));
  await raw.next("welcome");
  const got = {
    begin: null as null | Record<string, unknown>,
    chunks: [] as Buffer[],
    offsets: [] as number[],
    installed: false,
  };
  raw.ws.on("message", (data) => {
    const m = JSON.parse(String(data)) as { type: string; id: string; method: string; params: Record<string, unknown> };
    if (m.type !== "request") return;
    const ok = (received: number) => raw.send({ type: "response", id: m.id, ok: true, result: { ok: true, received } });
    if (m.method === "upgrade-begin") {
      if (typeof decide === "function") behaviour = decide();
      if (behaviour === "refuse")
        return raw.send({ type: "response", id: m.id, ok: false, error: "INVALID_REQUEST: this agent trusts no upgrade key" });
      got.begin = m.params;
      return ok(0);
    }
    if (m.method === "upgrade-chunk") {
      got.offsets.push(Number(m.params.offset));
      got.chunks.push(Buffer.from(String(m.params.data), "base64"));
      return ok(got.chunks.reduce((n, c) => n + c.length, 0));
    }
    if (m.method === "upgrade-install") {
      got.installed = true;
      ok(got.chunks.reduce((n, c) => n + c.length, 0));
      const upgradeId = String(m.params.upgradeId);
      const outcome = behaviour === "commit" ? "committed" : "rolled-back";
      setTimeout(
        () =>
          raw.send(
            status({
              upgrade: {
                upgradeId,
                from: "raw-test",
                to: String(got.begin?.version),
                outcome,
                ...(outcome === "rolled-back" ? { detail: "tunnels not up again: t-1" } : {}),
                at: new Date().toISOString(),
              },
            }),
          ),
        100,
      );
    }
  });
  return { id: device.id, raw, got };
}

async function uploadPackage(token: string, version: string, bytes: Buffer): Promise<string> {
  const keys = generateSigningKeys();
  expect((await call(token, "POST", "/api/agent-signing-keys", { name: `k-${version}`, publicKey: keys.publicKey })).status).toBe(
    201,
  );
  const res = await call<{ id: string }>(
    token,
    "POST",
    "/api/agent-packages",
    bytes,
    signatureHeaders(signPackageBytes(bytes, version, keys.privateKeyPem)),
  );
  expect(res.status).toBe(201);
  return res.body.id;
}

const settled = (token: string, id: string, done: (r: RolloutReport) => boolean) =>
  waitUntil(
    async () => (await call<RolloutReport>(token, "GET", `/api/agent-upgrades/${id}`)).body,
    done,
    15_000,
    `rollout ${id} to settle`,
  );

describe("agent rollouts over the device link", () => {
  it("sends the package in order to every device; reports make them upgraded or rolled back, a refusal fails one", async () => {
    const token = await adminToken();
    const bytes = randomBytes(UPGRADE_CHUNK_BYTES * 2 + 777);
    const pkg = await uploadPackage(token, "5.0.0", bytes);
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const [a, b, c] = await Promise.all([
      upgradingDevice(devices[0]!, "commit"),
      upgradingDevice(devices[1]!, "roll-back"),
      upgradingDevice(devices[2]!, "refuse"),
    ]);
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: [a.id, b.id, c.id] },
      canaryPercent: 0,
      batchSize: 3,
      healthTimeoutSec: 60,
    });
    expect(created.status).toBe(201);
    const done = await settled(token, created.body.id, (r) => r.state === "complete");
    const byDevice = Object.fromEntries(done.devices.map((d) => [d.device, d]));
    expect(byDevice[a.id]).toMatchObject({ state: "upgraded", fromVersion: "raw-test", detail: null });
    expect(byDevice[b.id]).toMatchObject({ state: "rolled-back", detail: "tunnels not up again: t-1" });
    expect(byDevice[c.id]!.state).toBe("failed");
    expect(byDevice[c.id]!.detail).toMatch(/the device refused the package: .*trusts no upgrade key/);
    expect(done.counts).toMatchObject({ upgraded: 1, "rolled-back": 1, failed: 1 });
    // What the device got is the package: begin's checksum and signature, chunks in order, the same bytes.
    expect(a.got.begin).toMatchObject({
      version: "5.0.0",
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    });
    expect(a.got.offsets).toEqual([0, UPGRADE_CHUNK_BYTES, UPGRADE_CHUNK_BYTES * 2]);
    expect(Buffer.concat(a.got.chunks).equals(bytes)).toBe(true);
    expect(a.got.installed).toBe(true);
    // Live events followed each device's progress (the journal the console's stream reads).
    const events = await g.database.db
      .selectFrom("live_events")
      .select("event")
      .where("organization_id", "=", g.org.id)
      .execute();
    const upgrades = events
      .map((e) => e.event as { kind: string; id: string; data?: { device?: string; status?: string } })
      .filter((e) => e.kind === "upgrade" && e.id === created.body.id);
    expect(upgrades.filter((e) => e.data?.device === a.id).map((e) => e.data?.status)).toEqual([
      "pending",
      "sending",
      "installing",
      "upgraded",
    ]);
    for (const d of [a, b, c]) d.raw.ws.close();
  });

  it("a canary that rolls back pauses the rollout; the other devices are not sent anything", async () => {
    const token = await adminToken();
    const pkg = await uploadPackage(token, "5.1.0", randomBytes(1000));
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    // Canaries are the first devices in id order: whichever gets the package first is the canary, and rolls back.
    let sent = 0;
    const firstRollsBack = (): Behaviour => (sent++ === 0 ? "roll-back" : "commit");
    const links = await Promise.all(devices.map((d) => upgradingDevice(d, firstRollsBack)));
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: links.map((l) => l.id) },
      canaryPercent: 33,
      batchSize: 1,
    });
    const paused = await settled(token, created.body.id, (r) => r.state === "paused");
    const canaries = paused.devices.filter((d) => d.canary);
    expect(canaries).toHaveLength(1);
    expect(canaries[0]).toMatchObject({ state: "rolled-back" });
    expect(links.filter((l) => l.got.begin !== null).map((l) => l.id)).toEqual([canaries[0]!.device]);
    expect(paused.devices.filter((d) => !d.canary).every((d) => d.state === "pending")).toBe(true);
    expect(paused.pausedReason).toBe(`canary ${canaries[0]!.name} rolled-back: tunnels not up again: t-1`);
    for (const l of links) l.raw.ws.close();
  });
});
