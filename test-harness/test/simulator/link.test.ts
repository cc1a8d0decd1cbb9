/** Connection lifecycle and reported figures: disconnects, replacement, liveness, metrics, public addresses. */
import { emptyDeviceConfig, type Status } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

async function nextStatus(deviceId: string, send: () => void): Promise<Status> {
  const pending = server.waitForMessage(deviceId, "status");
  send();
  return (await pending) as Status;
}

describe("connection on demand", () => {
  it("disconnects with 1000 and reconnects with a hello that carries the applied hash", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 2 });
    const d = fleet.device(0);
    const id = d.deviceId!;
    await server.apply(id, emptyDeviceConfig(id));
    await d.disconnect();
    expect(d.state).toBe("closed");
    await fleet.waitUntil(() => server.device(id).closes.length === 1);
    expect(server.device(id).closes[0]!.code).toBe(1000);
    expect(server.connectedCount).toBe(1);
    await d.connect();
    const hellos = server.device(id).messages.filter((m) => m.type === "hello");
    expect(hellos).toHaveLength(2);
    expect(hellos[1]).toMatchObject({ appliedHash: d.appliedHash });
    expect(d.appliedHash).not.toBeNull();
    expect(server.connectedCount).toBe(2);
  });

  it("reconnects by itself after the server drops it, with back-off", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, reconnectMinMs: 50 });
    const d = fleet.device(0);
    const back = d.waitFor("welcome", { timeoutMs: 5000 });
    server.kick(d.deviceId!, 1011, "server restarting");
    const closed = await d.waitFor("closed");
    expect(closed).toMatchObject({ code: 1011, reason: "server restarting" });
    await back;
    expect(d.ready).toBe(true);
    expect(server.device(d.deviceId!).counts.hello).toBe(2);
  });

  it("comes back after a busy server's Retry-After, not after its own back-off", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, reconnectMinMs: 50 });
    const d = fleet.device(0);
    server.busyAnswers = 1;
    const back = d.waitFor("welcome", { timeoutMs: 5000 });
    server.kick(d.deviceId!, 1011, "server restarting");
    await back;
    // Refused once (503, Retry-After: 1); the next try came a second later, where the back-off says 100 ms.
    expect(server.busyRefusals).toHaveLength(1);
    const next = server.upgradesAt.find((t) => t > server.busyRefusals[0]!);
    expect(next! - server.busyRefusals[0]!).toBeGreaterThanOrEqual(950);
    expect(server.device(d.deviceId!).counts.hello).toBe(2);
  });

  it("stays away after being replaced (4009) instead of fighting the newer connection", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, reconnectMinMs: 20 });
    const d = fleet.device(0);
    server.kick(d.deviceId!, 4009, "replaced by a newer connection");
    expect(await d.waitFor("closed")).toMatchObject({ code: 4009 });
    await new Promise((r) => setTimeout(r, 200));
    expect(d.state).toBe("closed");
    expect(server.device(d.deviceId!).counts.hello).toBe(1);
  });

  it("drop() cuts the TCP connection without a close frame", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const d = fleet.device(0);
    d.drop();
    await fleet.waitUntil(() => server.device(d.deviceId!).closes.length === 1);
    expect(server.device(d.deviceId!).closes[0]!.code).toBe(1006);
  });

  it("freeze() stops answering pings, so a server with liveness checks drops it", async () => {
    await server.stop();
    server = await FakeServer.start({ pingIntervalMs: 100 });
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 2, reconnect: false });
    const [frozen, healthy] = [fleet.device(0), fleet.device(1)];
    frozen.freeze();
    expect(frozen.sendStatus()).toBe(false);
    await fleet.waitUntil(() => server.device(frozen.deviceId!).closes.length === 1, 5000);
    expect(server.device(frozen.deviceId!).closes[0]!.code).toBe(1006);
    expect(server.device(healthy.deviceId!).link).not.toBeNull();
    expect(healthy.ready).toBe(true);
  });
});

describe("reported figures", () => {
  it("reports per-device and per-tunnel metrics; a down tunnel reports 100 % loss", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 2, metrics: { rtt: 12, jitter: 0.5 } });
    const [a, b] = [fleet.device(0), fleet.device(1)];
    const config = fullConfig(a.deviceId!);
    await server.apply(a.deviceId!, config);
    await server.apply(b.deviceId!, fullConfig(b.deviceId!));
    const [t1, t2] = config.tunnels.map((t) => t.id) as [string, string];
    a.setTunnelMetrics({ loss: 5, rtt: 80 });
    a.setTunnelMetrics({ up: false }, t2);
    const sa = await nextStatus(a.deviceId!, () => a.sendStatus());
    expect(sa.tunnels).toEqual([
      { id: t1, up: true, loss: 5, rtt: 80, jitter: 1, samples: 30 },
      { id: t2, up: false, loss: 100, rtt: 0, jitter: 0, samples: 30 },
    ]);
    const sb = await nextStatus(b.deviceId!, () => b.sendStatus());
    expect(sb.tunnels.map((t) => [t.loss, t.rtt, t.jitter])).toEqual([
      [0, 12, 0.5],
      [0, 12, 0.5],
    ]);
  });

  it("follows a metrics script over time", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1, syntheticTunnels: 1 });
    const d = fleet.device(0);
    d.setTunnelMetrics({
      steps: [
        { atMs: 0, metrics: { rtt: 10 } },
        { atMs: 150, metrics: { rtt: 300, loss: 20 } },
      ],
    });
    const first = await nextStatus(d.deviceId!, () => d.sendStatus());
    expect(first.tunnels[0]).toMatchObject({ rtt: 10, loss: 0 });
    await new Promise((r) => setTimeout(r, 200));
    const later = await nextStatus(d.deviceId!, () => d.sendStatus());
    expect(later.tunnels[0]).toMatchObject({ rtt: 300, loss: 20 });
  });

  it("reports a changed public address of the WAN interface", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    const d = fleet.device(0);
    const before = await nextStatus(d.deviceId!, () => d.sendStatus());
    const ports: (number | null)[] = [];
    for (const port of [40001, 40002, 40003]) {
      d.setPublicAddress({ publicIp: "203.0.113.9", publicPort: port });
      const s = await nextStatus(d.deviceId!, () => d.sendStatus());
      expect(s.interfaces[0]!.publicIp).toBe("203.0.113.9");
      ports.push(s.interfaces[0]!.publicPort);
    }
    expect(ports).toEqual([40001, 40002, 40003]);
    expect(before.interfaces[0]!.publicIp).not.toBe("203.0.113.9");
    expect(server.device(d.deviceId!).invalid).toEqual([]);
  });

  it("rejects metrics out of range at the call", async () => {
    fleet = await Simulator.start({ server: server.url, token: TOKEN, count: 1 });
    expect(() => fleet!.device(0).setTunnelMetrics({ loss: 140 })).toThrow(/at most 100/);
    expect(() =>
      fleet!.setTunnelMetrics({
        steps: [
          { atMs: 10, metrics: {} },
          { atMs: 5, metrics: {} },
        ],
      }),
    ).toThrow(/ascending/);
  });
});
