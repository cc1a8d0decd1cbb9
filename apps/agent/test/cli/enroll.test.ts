/** `tern-agent enroll` (register, then enable and start the service) and the settings file (/etc/tern/agent.yaml). */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDrivers } from "../../src/drivers/registry.ts";
import { parseCli } from "../../src/options.ts";
import type { Runner } from "../../src/runner.ts";
import { settingsFileEnv } from "../../src/settings-file.ts";
import { cli } from "../support/cli.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { FakeSystem } from "../support/fake-system.ts";

let dirs: TempDirs;
let sys: FakeSystem;
beforeEach(async () => {
  dirs = await tempDirs("enroll");
  sys = new FakeSystem([{ name: "wan0", mac: "02:00:00:00:0b:01", up: true, addresses: ["10.100.1.2/24"] }]);
  sys.on(["systemctl"], {});
});
afterEach(() => dirs.remove());

const systemctl = () => sys.commands().filter((c) => c.startsWith("systemctl"));

describe("enroll", () => {
  // System mode, as on a router; the state and run dirs are temporary, the settings file is explicit.
  const args = (server: string, token = "rt_test") => [
    "enroll",
    "--server",
    server,
    "--token",
    token,
    "--state-dir",
    dirs.stateDir,
    "--run-dir",
    dirs.runDir,
    "--hostname",
    "edge-e",
  ];

  it("registers through register's path, then enables and restarts the service when systemd runs", async () => {
    const server = await FakeControlServer.start({ autoApprove: false });
    try {
      const r = await cli(args(server.url), { runner: sys as Runner, drivers: createDrivers(), systemdBooted: async () => true });
      expect(r).toMatchObject({ code: 0, out: expect.stringContaining("started tern-agent.service") });
      expect(server.registrations).toHaveLength(1);
      expect(JSON.parse(await readFile(join(dirs.stateDir, "device.json"), "utf8"))).toMatchObject({ server: server.url });
      expect(systemctl()).toEqual(["systemctl enable tern-agent.service", "systemctl restart tern-agent.service"]);
    } finally {
      await server.stop();
    }
  });

  it("starts nothing where systemd does not run, or with --no-start, and says so", async () => {
    const server = await FakeControlServer.start();
    try {
      const none = await cli(args(server.url), {
        runner: sys as Runner,
        drivers: createDrivers(),
        systemdBooted: async () => false,
      });
      expect(none).toMatchObject({ code: 0, out: expect.stringContaining("systemd is not running on this machine") });
      const noStart = await cli([...args(server.url), "--no-start"], {
        runner: sys as Runner,
        drivers: createDrivers(),
        systemdBooted: async () => true,
      });
      expect(noStart).toMatchObject({ code: 0, out: expect.stringContaining("not started (--no-start)") });
      expect(server.registrations).toHaveLength(2);
      expect(systemctl()).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("a refused registration starts nothing and exits 1", async () => {
    const server = await FakeControlServer.start();
    try {
      const r = await cli(args(server.url, "rt_nope"), {
        runner: sys as Runner,
        drivers: createDrivers(),
        systemdBooted: async () => true,
      });
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/REGISTER_FAILED: .* answered 401/);
      expect(systemctl()).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe("settings file", () => {
  it("sits under the environment and the flags", async () => {
    const file = join(dirs.root, "agent.yaml");
    await writeFile(file, "# comments only\nlog-level: debug\nmetrics-port: 9100\nui-port: 0\nstatus-interval-ms: 2000\n");
    expect(await settingsFileEnv(file, true)).toEqual({
      TERN_AGENT_LOG_LEVEL: "debug",
      TERN_AGENT_METRICS_PORT: "9100",
      TERN_AGENT_UI_PORT: "0",
      TERN_AGENT_STATUS_INTERVAL_MS: "2000",
    });
    const layered = parseCli(["run", "--ui-port", "8090"], {
      ...(await settingsFileEnv(file, true)),
      TERN_AGENT_METRICS_PORT: "9200",
    });
    expect(layered).toMatchObject({ logLevel: "debug", metricsPort: 9200, uiPort: 8090, statusIntervalMs: 2000 });
  });

  it("refuses unknown keys and bad values with exit 2, and a named file that is missing", async () => {
    const file = join(dirs.root, "agent.yaml");
    await writeFile(file, "log-levle: debug\n");
    const typo = await cli(["status", "--config", file, "--state-dir", dirs.stateDir]);
    expect(typo).toMatchObject({ code: 2, err: expect.stringMatching(/INVALID_CONFIG: .*agent\.yaml/) });
    await writeFile(file, "metrics-port: 70000\n");
    expect((await cli(["status", "--config", file, "--state-dir", dirs.stateDir])).code).toBe(2);
    const missing = await cli(["status", "--config", join(dirs.root, "nope.yaml"), "--state-dir", dirs.stateDir]);
    expect(missing).toMatchObject({ code: 2, err: expect.stringMatching(/USAGE: cannot read the settings file/) });
    // The default file is optional: absent, nothing changes.
    expect(await settingsFileEnv(join(dirs.root, "absent.yaml"), false)).toEqual({});
  });
});
