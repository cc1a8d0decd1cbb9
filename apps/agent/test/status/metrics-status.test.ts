import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Health, Status } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { Driver } from "../../src/drivers/driver.ts";
import { silentLogger } from "../../src/log.ts";
import { StatusComposer, SystemHealth } from "../../src/status/index.ts";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { iface, linksConfig } from "../support/configs.ts";
import { driverContext } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";

describe("agent metrics endpoint", () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    h = null;
  });

  it("exposes apply durations, driver errors, outcomes, connection state and tunnel quality", async () => {
    h = await startAgent(null, { metrics: { host: "127.0.0.1", port: 0 } });
    h.tunnels.reports = [{ id: "tun-1", up: true, loss: 2.5, rtt: 12.25, jitter: 1.5, samples: 30 }];
    await h.agent.apply(linksConfig([iface("lan0", { address: "192.168.50.1/24" })]), "test");
    await h.agent.apply(linksConfig([iface("nope0")]), "test");
    const port = h.agent.snapshot().metrics?.port;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^tern_agent_driver_apply_duration_seconds_count\{driver="links"\} [2-9]$/m);
    expect(text).toMatch(/^tern_agent_driver_errors_total\{driver="links"\} 1$/m);
    expect(text).toMatch(/^tern_agent_applies_total\{result="ok"\} 1$/m);
    expect(text).toMatch(/^tern_agent_applies_total\{result="rolled_back"\} 1$/m);
    expect(text).toMatch(/^tern_agent_connected 0$/m);
    expect(text).toMatch(/^tern_agent_tunnel_loss_percent\{tunnel="tun-1"\} 2\.5$/m);
    expect(text).toMatch(/^tern_agent_tunnel_rtt_milliseconds\{tunnel="tun-1"\} 12\.25$/m);
    expect(text).toMatch(/^tern_agent_tunnel_jitter_milliseconds\{tunnel="tun-1"\} 1\.5$/m);
    expect(text).toMatch(/^tern_agent_tunnel_up\{tunnel="tun-1"\} 1$/m);
    expect(text).toMatch(/^tern_agent_process_resident_memory_bytes /m);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    // The failed apply is among the recent errors the status file and the local page show.
    expect(h.agent.snapshot().recentErrors[0]).toMatchObject({
      source: "apply",
      message: expect.stringMatching(/^links failed: LINK_NOT_FOUND/),
      count: 1,
    });
  });

  it("keeps running without metrics when the port is taken, and says so", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as AddressInfo).port;
    try {
      h = await startAgent(null, { metrics: { host: "127.0.0.1", port } });
      expect(h.agent.snapshot().metrics).toBeNull();
      expect(h.agent.snapshot().recentErrors[0]).toMatchObject({
        source: "metrics",
        message: expect.stringMatching(/EADDRINUSE/),
      });
    } finally {
      taken.close();
    }
  });

  it("hands the applied config to the tunnel-quality source once per config", async () => {
    h = await startAgent(null);
    const config = linksConfig([iface("lan0")]);
    await h.agent.apply(config, "test");
    await h.agent.apply(config, "test");
    await expect.poll(() => h?.tunnels.configured).toEqual([[]]);
  });
});

describe("status composition", () => {
  it("is always a valid protocol message, leaving out a driver part that breaks it", async () => {
    const sys = new FakeSystem([{ name: "lan0" }]);
    const broken: Driver = {
      name: "bgp",
      apply: async () => ({ changed: false }),
      plan: () => ({ files: [], commands: [] }),
      // An out-of-protocol state: must not reach the server.
      observe: async () => ({ bgp: { running: true, routerId: "x", localASN: 1, neighbors: [{ ip: "not-ip" }] } as never }),
    };
    const failing: Driver = { ...broken, name: "vrrp", observe: async () => Promise.reject(new Error("keepalived socket gone")) };
    const composer = new StatusComposer({
      drivers: [broken, failing],
      context: driverContext(sys, { stateDir: "/nonexistent", runDir: "/nonexistent" }),
      reconciler: { appliedHash: "h1", applying: false, current: null },
      tunnels: { report: () => [] },
      health: null,
      log: silentLogger,
    });
    const status = await composer.compose();
    expect(Status.parse(status)).toEqual(status);
    expect(status).toMatchObject({ appliedHash: "h1", bgp: null });
    expect(composer.errors.get("vrrp")).toBe("keepalived socket gone");
    expect(composer.errors.get("status")).toMatch(/bgp\.neighbors\.0/);
  });

  it("reads real health figures within the protocol's ranges", async () => {
    const health = await new SystemHealth().read();
    expect(Health.parse(health)).toEqual(health);
    expect(health?.uptimeSeconds).toBeGreaterThan(0);
    expect(health?.memoryPercent).toBeGreaterThan(0);
  });
});
