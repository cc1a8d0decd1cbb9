import { configHash, PROTOCOL_VERSION } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_VERSION } from "../../src/version.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { iface, linksConfig, route } from "../support/configs.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";

const A = linksConfig([
  iface("wan0", { type: "WAN", address: "10.0.0.2/24", gateway: "10.0.0.1" }),
  iface("lan0", { address: "192.168.50.1/24" }),
]);
const B = linksConfig([iface("wan0", { type: "WAN", address: "10.0.0.3/24", gateway: "10.0.0.1" })]);

describe("control link against the fake server", () => {
  let server: FakeControlServer | null = null;
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    await server?.stop();
    h = null;
    server = null;
  });

  it("says hello with protocol version, agent version, machine id and applied hash; pushes status at the welcome interval", async () => {
    server = await FakeControlServer.start({ statusIntervalMs: 100 });
    h = await startAgent(server);
    const hello = await server.waitFor("hello");
    expect(hello).toEqual({
      type: "hello",
      protocolVersion: PROTOCOL_VERSION,
      agentVersion: AGENT_VERSION,
      machineId: "test-machine-0001",
      hostname: "edge-test",
      appliedHash: null,
      // Signed with the device key over the server's challenge (the fake server checks it).
      proof: {
        publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        url: `${server.url.replace(/^http/, "ws")}/api/connect/ws`,
        signature: expect.any(String),
      },
    });
    expect(server.refusedProofs).toBe(0);
    await expect.poll(() => server?.messages("status").length, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    const status = server.messages("status")[0];
    expect(status?.interfaces.map((i) => i.name)).toEqual(["wan0", "lan0"]);
    expect(h.agent.snapshot().connection).toMatchObject({ state: "connected", serverVersion: "fake-0", statusIntervalMs: 100 });
    expect(server.invalid).toEqual([]);
  });

  it("applies a config and answers apply-result with per-driver results and the new hash; status carries it", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    const result = await server.apply(A, { id: "job-1" });
    expect(result).toMatchObject({ type: "apply-result", id: "job-1", ok: true, appliedHash: configHash(A), rolledBack: false });
    // Every driver in DRIVER_ORDER answers; links and management QoS (a WAN) had work, the other sections are empty.
    expect(result.drivers.map((d) => `${d.driver} ${d.ok} ${d.changed}`)).toEqual([
      "links true true",
      "lte true false",
      "wifi true false",
      "firewall true false",
      "ikev2 true false",
      "bgp true false",
      "vrrp true false",
      "dhcp true false",
      "policy true false",
      "qos true true",
    ]);
    // QoS marks the control link by the address and port the websocket really connected to.
    expect(h.sys.nft.tables.get("inet tern_qos")).toContain(`ip daddr 127.0.0.1 tcp dport ${server.port} meta priority set 1:10`);
    expect(h.sys.links.find((l) => l.name === "lan0")?.addresses).toEqual(["192.168.50.1/24"]);
    await server.waitFor("status", (s) => s.appliedHash === configHash(A) && s.interfaces[1]?.IPv4 === "192.168.50.1");
    // The same config again: ok, nothing changed anywhere.
    expect((await server.apply(A)).drivers.filter((d) => d.changed)).toEqual([]);
    expect(server.invalid).toEqual([]);
  });

  it("refuses a bad config or hash with a code and rolls back a failing one, reporting the hash still applied", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    await server.apply(A);
    const invalid = await server.apply({ ...A, interfaces: [{ ...A.interfaces[0], name: "x".repeat(40) }] } as typeof A, {
      hash: "whatever",
    });
    expect(invalid).toMatchObject({ ok: false, appliedHash: configHash(A), rolledBack: false, drivers: [] });
    expect(invalid.error).toMatch(/^INVALID_CONFIG: interfaces\.0\.name/);
    const wrongHash = await server.apply(B, { hash: configHash(A) });
    expect(wrongHash).toMatchObject({ ok: false, appliedHash: configHash(A) });
    expect(wrongHash.error).toMatch(/^HASH_MISMATCH/);

    const failing = linksConfig(B.interfaces, [route("172.16.0.0/12", "10.77.0.1")]);
    const rolled = await server.apply(failing);
    expect(rolled).toMatchObject({ ok: false, rolledBack: true, appliedHash: configHash(A) });
    expect(rolled.error).toMatch(/^links failed: ip route add 172.16.0.0\/12 via 10.77.0.1 .*Nexthop has invalid gateway/);
    expect(h.sys.links.find((l) => l.name === "wan0")?.addresses).toEqual(["10.0.0.2/24"]);
    expect(server.invalid).toEqual([]);
  });

  it("answers requests validated against the protocol: interface status, BGP, tunnels, ping, traceroute", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    h.tunnels.reports = [{ id: "t1", up: true, loss: 0, rtt: 1.5, jitter: 0.2, samples: 30 }];
    await server.waitFor("hello");
    await server.apply(A);

    const wanId = A.interfaces[0]?.devId;
    expect(await server.request("interface-status", { devId: wanId })).toMatchObject({
      ok: true,
      result: { devId: wanId, name: "wan0", IPv4: "10.0.0.2", IPv4Mask: 24, gateway: "10.0.0.1", operState: "up" },
    });
    expect(await server.request("interface-status", { devId: "mac:nope" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^NOT_FOUND/),
    });
    expect(await server.request("interface-status", {})).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^INVALID_REQUEST: interface-status: devId/),
    });
    expect(await server.request("bgp-status")).toMatchObject({ ok: true, result: { running: false, neighbors: [] } });
    expect(await server.request("tunnel-quality")).toMatchObject({ ok: true, result: h.tunnels.reports });
    // Ping and traceroute run the real tools against loopback; their lines come as request-progress first.
    const ping = await server.request("ping", { target: "127.0.0.1", count: 3, intervalMs: 200 });
    expect(ping).toMatchObject({ ok: true, result: { transmitted: 3, received: 3, lossPercent: 0, stopped: null } });
    const pingLines = server
      .messages("request-progress")
      .filter((m) => m.id === ping.id)
      .flatMap((m) => m.lines);
    expect(pingLines.filter((l) => l.startsWith("64 bytes from 127.0.0.1"))).toHaveLength(3);
    expect(await server.request("ping", { target: "not-an-ip; reboot" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^INVALID_REQUEST/),
    });
    expect(await server.request("traceroute", { target: "127.0.0.1", maxHops: 3 })).toMatchObject({
      ok: true,
      result: { output: expect.stringContaining("traceroute to 127.0.0.1"), hops: [{ hop: 1, address: "127.0.0.1" }] },
    });
    expect(await server.request("reboot")).toMatchObject({
      ok: false,
      error: 'INVALID_REQUEST: unknown request method "reboot"',
    });
    expect(server.invalid).toEqual([]);
  });

  it("answers garbage with a protocol error and stays connected", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    server.broadcast("{not json");
    server.broadcast({ type: "surprise" });
    await expect.poll(() => server?.messages("error").length).toBe(2);
    expect(server.messages("error")[0]).toEqual({ type: "error", code: "VALIDATION_FAILED", message: "message is not JSON" });
    expect(h.agent.snapshot().connection.state).toBe("connected");
  });

  it("pushes a status at once when a driver or probe calls notify()", async () => {
    server = await FakeControlServer.start({ statusIntervalMs: 60_000 });
    h = await startAgent(server);
    await server.waitFor("hello");
    await server.waitFor("status");
    h.tunnels.reports = [{ id: "t9", up: false, loss: 100, rtt: 0, jitter: 0, samples: 30 }];
    h.agent.notify("tunnel t9 down");
    const status = await server.waitFor("status", (s) => s.tunnels[0]?.id === "t9", 2000);
    // The interval is a minute: only notify() can have sent this one.
    expect(status.tunnels[0]?.up).toBe(false);
  });

  it("reconnects after the link drops and after the server comes back, saying hello with the applied hash", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server);
    await server.waitFor("hello");
    await server.apply(A);
    server.disconnectAll(1012, "restart");
    await expect.poll(() => server?.connections, { timeout: 5000 }).toBe(2);
    expect(server.messages("hello")[1]?.appliedHash).toBe(configHash(A));

    // The server goes away entirely; the agent keeps its config and keeps trying.
    const port = server.port;
    const devices = [...server.devices.values()];
    await server.stop();
    await expect.poll(() => h?.agent.snapshot().connection.state).toBe("disconnected");
    expect(h.agent.snapshot().connection.lastError).toMatch(/ECONNREFUSED|closed/);
    const reconnectsWhileDown = h.agent.snapshot().connection.reconnects;
    await expect
      .poll(() => (h?.agent.snapshot().connection.reconnects ?? 0) > reconnectsWhileDown + 1, { timeout: 5000 })
      .toBe(true);
    expect(h.sys.links.find((l) => l.name === "lan0")?.addresses).toEqual(["192.168.50.1/24"]);
    expect(h.agent.snapshot().appliedHash).toBe(configHash(A));

    server = await FakeControlServer.start({ port });
    for (const d of devices) server.addDevice(d);
    const hello = await server.waitFor("hello", () => true, 5000);
    expect(hello.appliedHash).toBe(configHash(A));
    // What happened offline is reported at once: a status right after the welcome.
    expect((await server.waitFor("status", () => true, 2000)).appliedHash).toBe(configHash(A));
  });

  it("backs off to the longest delay when the server refuses the token", async () => {
    server = await FakeControlServer.start();
    h = await startAgent(server, { token: "dt_wrong", backoff: { initialMs: 50, maxMs: 60_000, factor: 2 } });
    await expect.poll(() => h?.agent.snapshot().connection.lastError).toMatch(/401/);
    await new Promise((r) => setTimeout(r, 500));
    // A quick retry cannot fix a wrong token: one attempt, then a wait of 30–60 s.
    expect(server.attempts).toBe(1);
    expect(h.agent.snapshot().connection.state).toBe("disconnected");
  });

  it("comes back after the Retry-After of a busy server's 503, not after its back-off", async () => {
    server = await FakeControlServer.start();
    server.busyAnswers = 1;
    // A back-off of a minute: only the server's Retry-After (1 s) brings the agent back within seconds.
    const started = Date.now();
    h = await startAgent(server, { backoff: { initialMs: 60_000, maxMs: 120_000, factor: 2 } });
    await expect.poll(() => h?.agent.snapshot().connection.lastError, { timeout: 2000 }).toMatch(/503/);
    await server.waitFor("hello", () => true, 5000);
    expect(server.attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    await expect.poll(() => h?.agent.snapshot().connection.state, { timeout: 2000 }).toBe("connected");
  });

  it("waits at least 500 ms after a Retry-After of 0 (no tight loop against a refusing server)", async () => {
    server = await FakeControlServer.start();
    server.busyAnswers = 3;
    server.busyRetryAfter = "0";
    const started = Date.now();
    h = await startAgent(server, { backoff: { initialMs: 400, maxMs: 120_000, factor: 10 } });
    await server.waitFor("hello", () => true, 4000);
    // Three refusals, each followed by a 500 ms wait: not 0, and not the back-off (at least 200 + 2,000 + 20,000 ms).
    expect(server.attempts).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
