/**
 * The device simulator onboards a fresh fleet by itself against the real
 * server: registration, one bulk approval call with the admin's credentials
 * (POST /api/devices/approve), then every device online. Without credentials
 * a device that is not approved yet is retried with back-off (403 on the
 * upgrade) until someone approves it, instead of failing at the first 403.
 */
import { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { afterAll, describe, expect, it } from "vitest";
import { useGatewayServer } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";

const g = useGatewayServer();
const fleets: Simulator[] = [];
afterAll(async () => {
  for (const f of fleets) await f.stop();
});

async function registrationToken(): Promise<string> {
  const api = await g.api();
  const reg = await api.call<{ token: string }>("POST", "/api/tokens", { body: { name: `sim onboarding ${Date.now()}` } });
  expect(reg.status).toBe(201);
  return reg.body.token;
}

describe("simulator onboarding a fresh fleet", () => {
  it("registers, approves in one bulk call with the admin's credentials, and brings every device online", async () => {
    const fleet = await Simulator.start({
      server: g.server.url,
      token: await registrationToken(),
      count: 6,
      machinePrefix: `fresh-${Math.random().toString(16).slice(2, 8)}`,
      admin: { email: TEST_ADMIN.email, password: TEST_ADMIN.password },
      reconnectMinMs: 50,
      reconnectMaxMs: 500,
    });
    fleets.push(fleet);
    expect(fleet.failures).toEqual([]);
    expect(fleet.devices.every((d) => d.ready && d.approved)).toBe(true);
    const ids = fleet.devices.map((d) => d.deviceId!);
    const rows = await g.database.db.selectFrom("devices").select(["id", "is_approved"]).where("id", "in", ids).execute();
    expect(rows.filter((r) => r.is_approved)).toHaveLength(6);
  });

  it("without credentials, retries a device that is not approved yet instead of stopping at 403", async () => {
    const fleet = Simulator.create({
      server: g.server.url,
      token: await registrationToken(),
      count: 1,
      machinePrefix: `later-${Math.random().toString(16).slice(2, 8)}`,
      reconnectMinMs: 50,
      reconnectMaxMs: 200,
      approvalWaitMs: 20_000,
    });
    fleets.push(fleet);
    await fleet.registerAll();
    const device = fleet.device(0);
    expect(device.approved).toBe(false);
    const connected = device.connect();
    // Refused at least once (403) before an operator approves it.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(device.ready).toBe(false);
    expect(device.lastError ?? "").toMatch(/403/);
    const api = await g.api();
    const approved = await api.call<{ approved: number }>("POST", "/api/devices/approve", {
      body: { deviceIds: [device.deviceId] },
    });
    expect(approved.status).toBe(202);
    expect(approved.body.approved).toBe(1);
    await connected;
    expect(device.ready).toBe(true);
  });

  it("gives up after approvalWaitMs with the 403 in the error", async () => {
    const fleet = Simulator.create({
      server: g.server.url,
      token: await registrationToken(),
      count: 1,
      machinePrefix: `never-${Math.random().toString(16).slice(2, 8)}`,
      reconnectMinMs: 50,
      reconnectMaxMs: 100,
      approvalWaitMs: 400,
    });
    fleets.push(fleet);
    await fleet.registerAll();
    await expect(fleet.device(0).connect()).rejects.toThrow(/403/);
  });
});
