/** An in-process agent on a fake system, talking to a FakeControlServer. */
import type { TunnelReport } from "@tern/protocol";
import { Agent, type AgentOptions } from "../../src/daemon/index.ts";
import { createDrivers } from "../../src/drivers/registry.ts";
import type { DeviceCredentials } from "../../src/identity/index.ts";
import { silentLogger } from "../../src/log.ts";
import { agentPaths } from "../../src/paths.ts";
import type { TunnelQualitySource } from "../../src/status/index.ts";
import { type TempDirs, tempDirs } from "./context.ts";
import type { FakeControlServer } from "./fake-control-server.ts";
import { FakeSystem } from "./fake-system.ts";

export class FakeTunnels implements TunnelQualitySource {
  reports: TunnelReport[] = [];
  configured: string[][] = [];
  closed = 0;
  close(): void {
    this.closed += 1;
  }
  report(): TunnelReport[] {
    return this.reports;
  }
  configure(config: { tunnels: { id: string }[] }): void {
    this.configured.push(config.tunnels.map((t) => t.id));
  }
}

export interface Harness {
  agent: Agent;
  sys: FakeSystem;
  dirs: TempDirs;
  tunnels: FakeTunnels;
  credentials: DeviceCredentials | null;
  stop(): Promise<void>;
}

export async function startAgent(
  server: FakeControlServer | null,
  overrides: Partial<AgentOptions> & { sys?: FakeSystem; dirs?: TempDirs; token?: string } = {},
): Promise<Harness> {
  const sys = overrides.sys ?? new FakeSystem([{ name: "wan0" }, { name: "lan0" }]);
  const dirs = overrides.dirs ?? (await tempDirs("agent"));
  const tunnels = new FakeTunnels();
  const device = server?.addDevice();
  const credentials: DeviceCredentials | null = server
    ? {
        server: server.url,
        deviceId: device?.deviceId ?? "x",
        deviceToken: overrides.token ?? device?.token ?? "x",
        machineId: "test-machine-0001",
        isApproved: true,
        registeredAt: new Date().toISOString(),
      }
    : null;
  const agent = new Agent({
    paths: agentPaths(dirs.stateDir, dirs.runDir),
    mode: "standalone",
    drivers: createDrivers(),
    runner: sys,
    log: silentLogger,
    machineId: "test-machine-0001",
    hostname: "edge-test",
    credentials,
    statusIntervalMs: 60_000,
    metrics: null,
    tunnels,
    health: null,
    backoff: { initialMs: 50, maxMs: 400, factor: 2 },
    ...overrides,
  });
  await agent.start();
  return {
    agent,
    sys,
    dirs,
    tunnels,
    credentials,
    async stop() {
      await agent.stop();
      if (!overrides.dirs) await dirs.remove();
    },
  };
}
