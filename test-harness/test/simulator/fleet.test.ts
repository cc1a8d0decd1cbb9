/** The simulator against the fake gateway: onboarding, apply, status, requests. */
import {
  configHash,
  DeviceMessage,
  emptyDeviceConfig,
  type Hello,
  PROTOCOL_VERSION,
  REQUESTS,
  type Status,
} from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeServer } from "../../src/simulator/fake-server/server.ts";
import { Simulator } from "../../src/simulator/fleet.ts";
import { fullConfig, TOKEN } from "./helpers.ts";

let server: FakeServer;
let fleet: Simulator | undefined;

beforeEach(async () => {
  server = await FakeServer.start({ statusIntervalMs: 60_000 });
});

afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await server.stop();
});

function statuses(deviceId: string): Status[] {
  return server.device(deviceId).messages.filter((m): m is Status => m.type === "status");
}

describe("onboarding", () => {
  it("registers and connects every device, each saying hello with its identity", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 5, machinePrefix: "t-onboard" });
    expect(fleet.stats()).toMatchObject({ devices: 5, registered: 5, approved: 5, ready: 5, failures: 0 });
    expect(server.devices.size).toBe(5);
    expect(server.connectedCount).toBe(5);
    const machineIds = new Set<string>();
    for (const d of fleet.devices) {
      const fake = server.device(d.deviceId!);
      const hello = fake.messages[0] as Hello;
      expect(hello).toMatchObject({
        type: "hello",
        protocolVersion: PROTOCOL_VERSION,
        machineId: d.machineId,
        appliedHash: null,
      });
      // Signed with the device's own key, the one it registered (the fake server checked the signature).
      expect(hello.proof?.publicKey).toBe(fake.registration.identity.publicKey);
      expect(hello.proof?.publicKey).toBe(d.key().publicKey);
      expect(fake.registration.interfaces.map((i) => i.name)).toEqual(["eth0", "eth1"]);
      expect(fake.invalid).toEqual([]);
      machineIds.add(d.machineId);
    }
    expect(machineIds.size).toBe(5);
    expect(new Set(fleet.devices.map((d) => d.key().publicKey)).size).toBe(5);
  });

  it("uses the server's status interval from welcome and sends valid periodic status", async () => {
    await server.stop();
    server = await FakeServer.start({ statusIntervalMs: 100 });
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 3, syntheticTunnels: 4 });
    expect(fleet.device(0).statusIntervalMs).toBe(100);
    await fleet.waitUntil((f) => f.devices.every((d) => d.statusSent >= 3), 5000);
    // Sent is not yet received: wait for the fake server to have read them.
    const devices = fleet.devices;
    await vi.waitFor(() => {
      for (const d of devices) expect(statuses(d.deviceId!).length).toBeGreaterThanOrEqual(3);
    }, 5000);
    for (const d of devices) {
      const s = statuses(d.deviceId!);
      expect(s[0]!.tunnels.map((t) => t.id)).toEqual(fleet.syntheticTunnelIds);
      expect(server.device(d.deviceId!).invalid).toEqual([]);
    }
  });

  it("rejects a wrong registration token with the server's status", async () => {
    await expect(Simulator.start({ server: server.url, token: "wrong", count: 1 })).rejects.toMatchObject({
      name: "RegistrationError",
      status: 401,
    });
  });

  it("keeps going past failures with failFast off and reports them", async () => {
    fleet = await Simulator.start({ server: server.url, token: "wrong", count: 2, failFast: false });
    expect(fleet.failures).toHaveLength(2);
    expect(fleet.failures[0]!.error).toMatch(/HTTP 401/);
    expect(fleet.stats().ready).toBe(0);
  });

  it("waits for approval: refused with 4003, accepted after approve", async () => {
    await server.stop();
    server = await FakeServer.start({ autoApprove: false });
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, connect: false });
    const d = fleet.device(0);
    expect(d.approved).toBe(false);
    await expect(d.connect()).rejects.toThrow(/4003/);
    expect(d.lastClose).toEqual({ code: 4003, reason: "device is not approved" });
    server.approve(d.deviceId!);
    await d.disconnect();
    await d.connect();
    expect(d.ready).toBe(true);
  });

  it("is refused with 4006 when it speaks a protocol version the server does not accept", async () => {
    await expect(
      Simulator.start({ server: server.url, token: TOKEN, count: 1, protocolVersion: 99, reconnect: false }),
    ).rejects.toThrow(/4006 protocol 99 not accepted/);
  });
});

describe("apply", () => {
  it("answers apply with the protocol's configHash and reports it and the config's tunnels afterwards", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 2 });
    const d = fleet.device(1);
    const config = fullConfig(d.deviceId!);
    const result = await server.apply(d.deviceId!, config);
    expect(result).toMatchObject({ ok: true, rolledBack: false, appliedHash: configHash(config) });
    expect(result.drivers.map((r) => r.driver)).toEqual(["links", "firewall", "ikev2", "bgp", "vrrp", "dhcp", "policy", "qos"]);
    expect(d.appliedHash).toBe(configHash(config));
    expect(d.tunnels).toEqual(config.tunnels.map((t) => t.id));
    expect(d.sendStatus()).toBe(true);
    const status = await server.waitForMessage(d.deviceId!, "status");
    expect(status).toMatchObject({ appliedHash: configHash(config), applying: false });
    expect((status as Status).tunnels.map((t) => t.id)).toEqual(config.tunnels.map((t) => t.id));
    expect((status as Status).vrrp).toEqual([{ groupId: config.vrrp[0]!.groupId, state: "MASTER", since: null }]);
    // The other device is untouched.
    expect(fleet.device(0).appliedHash).toBeNull();
  });

  it("fails a named driver and rolls back to the previous hash", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const d = fleet.device(0);
    const first = emptyDeviceConfig(d.deviceId!);
    await server.apply(d.deviceId!, first);
    d.setApplyBehaviour({ failDriver: "ikev2" });
    const result = await server.apply(d.deviceId!, fullConfig(d.deviceId!));
    expect(result).toMatchObject({ ok: false, rolledBack: true, appliedHash: configHash(first), error: "ikev2 failed" });
    expect(result.drivers.map((r) => [r.driver, r.ok])).toEqual([
      ["links", true],
      ["firewall", true],
      ["ikev2", false],
    ]);
    expect(d.appliedHash).toBe(configHash(first));
  });

  it("reports applying while a delayed apply runs, then the result", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, apply: { delayMs: 300 } });
    const d = fleet.device(0);
    const config = emptyDeviceConfig(d.deviceId!);
    const pending = server.apply(d.deviceId!, config);
    await d.waitFor("apply");
    d.sendStatus();
    expect(await server.waitForMessage(d.deviceId!, "status")).toMatchObject({ applying: true, appliedHash: null });
    expect(await pending).toMatchObject({ ok: true, appliedHash: configHash(config) });
  });

  it("never answers when told to, and can still report the hash in status (time-out then correction)", async () => {
    fleet = await Simulator.start({
      server: server.url,
      token: TOKEN,
      count: 1,
      apply: { neverAnswer: true, applySilently: true },
    });
    const d = fleet.device(0);
    const config = emptyDeviceConfig(d.deviceId!);
    await expect(server.apply(d.deviceId!, config, 300)).rejects.toThrow(/no apply-result/);
    expect(server.device(d.deviceId!).counts["apply-result"]).toBeUndefined();
    d.sendStatus();
    expect(await server.waitForMessage(d.deviceId!, "status")).toMatchObject({ appliedHash: configHash(config) });
  });

  it("rejects an unknown driver name at the call", async () => {
    await expect(
      Simulator.start({ server: "http://127.0.0.1:1", token: TOKEN, count: 1, apply: { failDriver: "nope" } }),
    ).rejects.toThrow(/unknown driver "nope"/);
  });
});

describe("requests", () => {
  it("answers every on-demand read with a result of the protocol's shape", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const d = fleet.device(0);
    await server.apply(d.deviceId!, fullConfig(d.deviceId!));
    const devId = server.device(d.deviceId!).registration.interfaces[0]!.devId;
    const cases = [
      ["interface-status", { devId }],
      ["bgp-status", {}],
      ["tunnel-quality", {}],
      ["ping", { target: "10.100.2.2", count: 5 }],
      ["traceroute", { target: "10.100.2.2" }],
    ] as const;
    for (const [method, params] of cases) {
      const res = await server.request(d.deviceId!, method, params);
      expect(res.ok, `${method}: ${res.error}`).toBe(true);
      expect(() => REQUESTS[method].result.parse(res.result)).not.toThrow();
    }
    const bgp = await server.request(d.deviceId!, "bgp-status", {});
    expect(bgp.result).toMatchObject({ running: true, localASN: 65001, neighbors: [{ ip: "10.100.2.2", state: "Established" }] });
  });

  it("answers bad params and unknown interfaces with ok: false and a reason", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const id = fleet.device(0).deviceId!;
    expect(await server.request(id, "interface-status", { devId: "nope" })).toMatchObject({
      ok: false,
      error: "no interface with devId nope",
    });
    expect(await server.request(id, "ping", { target: "not-an-ip; reboot" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/bad params for ping/),
    });
  });

  it("answers a malformed server message with an error instead of crashing", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const d = fleet.device(0);
    const failed = d.waitFor("failed");
    server.sendRaw(d.deviceId!, "{not json");
    expect((await failed).reason).toMatch(/invalid server message/);
    const err = await server.waitForMessage(d.deviceId!, "error");
    expect(DeviceMessage.parse(err)).toMatchObject({ type: "error", code: "bad-message" });
    expect(d.ready).toBe(true);
  });
});
