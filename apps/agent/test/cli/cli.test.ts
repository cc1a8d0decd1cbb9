import { spawn } from "node:child_process";
import { createPrivateKey, createPublicKey, verify } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { configHash, DeviceConfig, RegisterRequest, registerProofText } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDrivers } from "../../src/drivers/registry.ts";
import { parseCli } from "../../src/options.ts";
import { ExecRunner, type Runner } from "../../src/runner.ts";
import { cli } from "../support/cli.ts";
import { fixture, iface, linksConfig } from "../support/configs.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { FakeSystem } from "../support/fake-system.ts";

describe("options", () => {
  it("takes flags over environment variables and derives the run dir from the mode", () => {
    const env = { TERN_AGENT_STATE_DIR: "/env/state", TERN_AGENT_MODE: "standalone", TERN_AGENT_METRICS_PORT: "0" };
    expect(parseCli(["status"], env)).toMatchObject({
      stateDir: "/env/state",
      runDir: "/env/state/run",
      mode: "standalone",
      metricsPort: 0,
    });
    expect(parseCli(["status", "--state-dir", "/flag"], env)).toMatchObject({ stateDir: "/flag", runDir: "/flag/run" });
    expect(parseCli(["run"], {})).toMatchObject({
      stateDir: "/var/lib/tern-agent",
      runDir: "/run/tern-agent",
      mode: "system",
      metricsPort: 9464,
    });
  });
  it("refuses bad values and misplaced options with USAGE", () => {
    expect(() => parseCli(["run", "--mode", "cloud"], {})).toThrow(/USAGE|mode/);
    expect(() => parseCli(["run", "--metrics-port", "70000"], {})).toThrow(expect.objectContaining({ code: "USAGE" }));
    expect(() => parseCli(["apply", "--dest", "/tmp"], {})).toThrow(/--dest is an option of dump, not of apply/);
    expect(() => parseCli(["run", "--frobnicate"], {})).toThrow(expect.objectContaining({ code: "USAGE" }));
  });
});

describe("tern-agent commands (in-process, fake system)", () => {
  let dirs: TempDirs;
  let sys: FakeSystem;
  let common: string[];
  beforeEach(async () => {
    dirs = await tempDirs("cli");
    sys = new FakeSystem([
      { name: "wan0", mac: "02:00:00:00:0a:01", up: true, addresses: ["10.100.1.2/24"] },
      { name: "lan0", mac: "02:00:00:00:0a:02" },
      { name: "lo", mac: "00:00:00:00:00:00", linkType: "loopback", up: true, addresses: ["127.0.0.1/8"] },
    ]);
    sys.routes.push({ table: "main", dst: "0.0.0.0/0", gateway: "10.100.1.1", dev: "wan0", metric: 0, proto: "dhcp" });
    common = [
      "--state-dir",
      dirs.stateDir,
      "--mode",
      "standalone",
      "--metrics-port",
      "0",
      "--hostname",
      "edge-a",
      "--log-level",
      "warn",
    ];
  });
  afterEach(() => dirs.remove());
  const deps = () => ({ runner: sys as Runner, drivers: createDrivers() });
  const configFile = async (config: unknown, name = "config.json") => {
    const path = join(dirs.root, name);
    await writeFile(path, JSON.stringify(config));
    return path;
  };

  it("plan prints files and commands without running anything; private file contents are hidden", async () => {
    const r = await cli(["plan", await configFile(fixture("DeviceConfig", "valid-full")), ...common], deps());
    expect(r.code).toBe(0);
    expect(r.out).toContain("## links\n$ ip link set dev wan0 mtu 1500\n");
    expect(r.out).toContain("$ ip route add default via 10.101.1.1 dev wan1 metric 10 proto 57");
    expect(sys.calls).toEqual([]);
    const json = await cli(["plan", await configFile(fixture("DeviceConfig", "valid-full")), "--json", ...common], deps());
    expect(JSON.parse(json.out).hash).toBe(configHash(DeviceConfig.parse(fixture("DeviceConfig", "valid-full"))));
  });

  it("plan and apply refuse invalid configs with exit 2 and the field path", async () => {
    const bad = fixture("DeviceConfig", "invalid-long-ifname") as { expectPath: string; value: unknown };
    for (const cmd of ["plan", "apply"]) {
      const r = await cli([cmd, await configFile(bad.value), ...common], deps());
      expect(r.code).toBe(2);
      expect(r.err).toMatch(new RegExp(`^tern-agent: INVALID_CONFIG: .*${bad.expectPath.replaceAll(".", "\\.")}`));
    }
    expect((await cli(["apply", join(dirs.root, "missing.json"), ...common], deps())).err).toMatch(/USAGE: cannot read .*ENOENT/);
    expect(sys.mutating()).toEqual([]);
  });

  it("apply reconciles once, persists the last good config and prints per-driver results", async () => {
    const config = linksConfig([iface("lan0", { address: "192.168.50.1/24" })]);
    const r = await cli(["apply", await configFile(config), ...common], deps());
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^applied ${configHash(config)} in \\d+ ms\\n  links +ok +changed`));
    // Every driver ran, in DRIVER_ORDER; only links had something to do (a LAN: address, up, forwarding).
    expect(
      r.out
        .split("\n")
        .slice(1, 11)
        .map((l) => l.trim().split(/ +/).slice(0, 3).join(" ")),
    ).toEqual([
      "links ok changed",
      "lte ok unchanged",
      "wifi ok unchanged",
      "firewall ok unchanged",
      "ikev2 ok unchanged",
      "bgp ok unchanged",
      "vrrp ok unchanged",
      "dhcp ok unchanged",
      "policy ok unchanged",
      "qos ok unchanged",
    ]);
    expect(sys.mutating()).toEqual([
      "ip link set dev lan0 up",
      "ip addr add 192.168.50.1/24 dev lan0",
      "sysctl -w net.ipv4.ip_forward=1",
    ]);
    const saved = JSON.parse(await readFile(join(dirs.stateDir, "applied.json"), "utf8"));
    expect(saved.hash).toBe(configHash(config));
    // status without a daemon: not running (exit 3), but the applied config is known.
    const st = await cli(["status", ...common], deps());
    expect(st).toMatchObject({ code: 3 });
    expect(st.out).toContain(`applied config: ${configHash(config)}`);
  });

  it("apply reports a failed driver, rolls back, exits 1", async () => {
    const ok = linksConfig([iface("lan0", { address: "192.168.50.1/24" })]);
    await cli(["apply", await configFile(ok), ...common], deps());
    const missing = linksConfig([iface("lan0", { address: "192.168.60.1/24" }), iface("wan9")]);
    const r = await cli(["apply", await configFile(missing, "bad.json"), "--json", ...common], deps());
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ ok: false, rolledBack: true, appliedHash: configHash(ok), code: "DRIVER_FAILED" });
    expect(JSON.parse(r.out).error).toMatch(/^links failed: LINK_NOT_FOUND: interface wan9/);
  });

  it("apply refuses to run while another agent holds the lock", async () => {
    const holder = spawn("sleep", ["30"]);
    try {
      await mkdir(join(dirs.stateDir, "run"), { recursive: true });
      await writeFile(join(dirs.stateDir, "run", "agent.lock"), `${holder.pid}\n`);
      const r = await cli(["apply", await configFile(linksConfig([])), ...common], deps());
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`LOCKED: another tern-agent \\(pid ${holder.pid}\\) holds`));
    } finally {
      holder.kill();
    }
    await new Promise((r) => (holder.exitCode !== null || holder.signalCode !== null ? r(null) : holder.once("exit", r)));
    // A lock whose process is gone is taken over.
    const r = await cli(["apply", await configFile(linksConfig([])), ...common], deps());
    expect(r.code).toBe(0);
  });

  it("register posts the protocol's RegisterRequest and stores the device token 0600", async () => {
    const server = await FakeControlServer.start({ autoApprove: false });
    try {
      const r = await cli(["register", "--server", server.url, "--token", "rt_test", ...common], deps());
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/registered as device .* with 2 interface\(s\)/);
      expect(r.out).toContain("not approved yet");
      const sent = server.registrations[0];
      expect(RegisterRequest.parse(sent)).toEqual(sent);
      expect(sent).toMatchObject({
        hostname: "edge-a",
        versions: { protocol: 2 },
        interfaces: [
          {
            devId: "mac:02:00:00:00:0a:01",
            name: "wan0",
            IPv4: "10.100.1.2",
            IPv4Mask: 24,
            gateway: "10.100.1.1",
            deviceType: "ethernet",
          },
          { devId: "mac:02:00:00:00:0a:02", name: "lan0", IPv4: "", IPv4Mask: null, gateway: "" },
        ],
      });
      // Standalone: a generated machine id kept in the state dir, the same on every call.
      const kept = (await readFile(join(dirs.stateDir, "machine-id"), "utf8")).trim();
      expect(sent?.machineId).toBe(kept);
      const device = join(dirs.stateDir, "device.json");
      expect((await stat(device)).mode & 0o777).toBe(0o600);
      // The device key: made here, private half 0600 in the state dir, the registration signed by it.
      const keyFile = join(dirs.stateDir, "device-key.pem");
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const key = createPrivateKey(await readFile(keyFile, "utf8"));
      expect((createPublicKey(key).export({ format: "jwk" }) as { x: string }).x).toBe(sent?.identity.publicKey);
      const signed = registerProofText({ machineId: kept, publicKey: sent!.identity.publicKey, at: sent!.identity.at });
      expect(verify(null, Buffer.from(signed), createPublicKey(key), Buffer.from(sent!.identity.signature, "base64url"))).toBe(
        true,
      );
      expect(JSON.parse(await readFile(device, "utf8"))).toMatchObject({
        server: server.url,
        isApproved: false,
        machineId: kept,
      });

      const again = await cli(["register", "--server", server.url, "--token", "rt_test", ...common], deps());
      expect(again.err).toMatch(/^note: replacing the registration as device [0-9a-f-]{36} with http/);
      expect(server.registrations[1]?.machineId).toBe(kept);
      // Registering again proves the same key (the same device), signed anew.
      expect(server.registrations[1]?.identity.publicKey).toBe(sent?.identity.publicKey);
      expect(server.registrations[1]?.identity.at).toBeGreaterThanOrEqual(sent!.identity.at);

      const wrong = await cli(["register", "--server", server.url, "--token", "rt_nope", ...common], deps());
      expect(wrong.code).toBe(1);
      expect(wrong.err).toMatch(/REGISTER_FAILED: .* answered 401: UNAUTHENTICATED/);
      const missing = await cli(["register", "--server", server.url, ...common], deps());
      expect(missing).toMatchObject({
        code: 2,
        err: expect.stringMatching(/USAGE: register needs --server URL and --token TOKEN/),
      });
    } finally {
      await server.stop();
    }
    const unreachable = await cli(["register", "--server", "http://127.0.0.1:1", "--token", "rt_test", ...common], deps());
    expect(unreachable.err).toMatch(/REGISTER_FAILED: cannot reach http:\/\/127.0.0.1:1\/api\/connect\/register/);
  });

  it("register → run connects and applies; status shows it; stop leaves the config in place", async () => {
    const server = await FakeControlServer.start({ statusIntervalMs: 100 });
    const stop = new AbortController();
    try {
      expect((await cli(["register", "--server", server.url, "--token", "rt_test", ...common], deps())).code).toBe(0);
      const running = cli(["run", ...common], { ...deps(), stopSignal: stop.signal });
      await server.waitFor("hello");
      const config = linksConfig([iface("lan0", { address: "192.168.50.1/24" })]);
      expect(await server.apply(config)).toMatchObject({ ok: true, appliedHash: configHash(config) });
      await expect
        .poll(async () => (await cli(["status", ...common], deps())).out, { timeout: 5000 })
        .toMatch(/applied: +[0-9a-f]{64}/);
      const st = await cli(["status", ...common], deps());
      expect(st.code).toBe(0);
      expect(st.out).toMatch(/connection: +connected since .* ws:\/\/127\.0\.0\.1:\d+\/api\/connect\/ws/);
      expect(st.out).toContain(`applied:     ${configHash(config)}`);
      expect(st.out).toMatch(/links +ok/);
      expect(st.out).toMatch(/lan0 +up +192\.168\.50\.1\/24/);
      const json = JSON.parse((await cli(["status", "--json", ...common], deps())).out);
      expect(json).toMatchObject({
        running: true,
        snapshot: { appliedHash: configHash(config), connection: { state: "connected" } },
      });
      stop.abort();
      expect((await running).code).toBe(0);
      expect((await cli(["status", ...common], deps())).code).toBe(3);
      expect(sys.links.find((l) => l.name === "lan0")?.addresses).toEqual(["192.168.50.1/24"]);
      expect(server.invalid).toEqual([]);
    } finally {
      stop.abort();
      await server.stop();
    }
  });

  it("dump writes one 0600 archive with logs, redacted config and token, driver state, and leaves private files out", async () => {
    const exec = new ExecRunner();
    const mixed: Runner = {
      run: (argv, o) => (["tar", "uname", "df"].includes(argv[0] ?? "") ? exec.run(argv, o) : sys.run(argv, o)),
    };
    const full = DeviceConfig.parse(fixture("DeviceConfig", "valid-full"));
    // A config with a PSK as last good (written as apply would), a device token, and a private rendered file.
    const { StateStore } = await import("../../src/reconcile/store.ts");
    const { silentLogger } = await import("../../src/log.ts");
    await new StateStore(
      { applied: join(dirs.stateDir, "applied.json"), pending: join(dirs.stateDir, "pending.json") },
      silentLogger,
    ).saveApplied(full, configHash(full));
    await writeFile(
      join(dirs.stateDir, "device.json"),
      JSON.stringify({ server: "http://x", deviceId: "d1", deviceToken: "dt_supersecret" }),
    );
    await cli(["apply", await configFile(linksConfig([iface("lan0", { address: "192.168.9.1/24" })])), ...common], deps());
    // Rendered files as charon's would be (the apply above, without tunnels, removed the driver's directory).
    await mkdir(join(dirs.stateDir, "run", "ikev2", "conns"), { recursive: true });
    await writeFile(join(dirs.stateDir, "run", "ikev2", "swanctl.conf"), "secret = generated-tunnel-secret-0001\n", {
      mode: 0o600,
    });
    await writeFile(
      join(dirs.stateDir, "run", "ikev2", "conns", "tern-device-1.conf"),
      "secrets {\n  ike-tern-device-1 {\n    secret = 0sZ2VuZXJhdGVkLXR1bm5lbC1zZWNyZXQtMDAwMQ==\n  }\n}\n",
      { mode: 0o600 },
    );
    await writeFile(join(dirs.stateDir, "run", "ikev2", "strongswan.conf"), "charon {}\n", { mode: 0o644 });
    // the apply replaced applied.json; put the PSK config back so redaction is tested
    await new StateStore(
      { applied: join(dirs.stateDir, "applied.json"), pending: join(dirs.stateDir, "pending.json") },
      silentLogger,
    ).saveApplied(full, configHash(full));

    const dest = join(dirs.root, "out");
    const r = await cli(["dump", "--dest", dest, ...common], { ...deps(), runner: mixed });
    expect(r.code).toBe(0);
    const archive = r.out.trim();
    expect(archive).toMatch(new RegExp(`^${dest}/tern-agent-dump-edge-a-\\d{8}T\\d{6}Z\\.tar\\.gz$`));
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    const list = (await exec.run(["tar", "-tzf", archive])).stdout.split("\n").map((l) => l.replace(/^[^/]+\//, ""));
    const list0 = (path: string) =>
      path
        .split("/")
        .at(-1)
        ?.replace(/\.tar\.gz$/, "");
    expect(list).toEqual(
      expect.arrayContaining([
        "README.txt",
        "agent/applied.json",
        "agent/device.json",
        "logs/agent.log",
        "state/links/owned.json",
        "run/ikev2/strongswan.conf",
        "drivers/links/ip-addr.json",
        "drivers/links/owned.json",
        // Every driver adds its own state: daemon configs, daemon answers, the agent's tables, rules and routes.
        "drivers/firewall/nft-table-tern.txt",
        "drivers/ikev2/strongswan.conf",
        "drivers/ikev2/tern-device-1.conf",
        "drivers/ikev2/swanctl-list-sas.txt",
        "drivers/bgp/show-bgp-summary.txt",
        "drivers/vrrp/states.json",
        "drivers/dhcp/kea-dhcp4.conf",
        "drivers/policy/ip-rule.json",
        "drivers/policy/ip-route-table-30000.json",
        "drivers/qos/nft-table-tern_qos.txt",
        "system/uname.txt",
      ]),
    );
    // A rendered file with a PSK goes into the driver's part redacted.
    const conn = (await exec.run(["tar", "-xzOf", archive, `${list0(archive)}/drivers/ikev2/tern-device-1.conf`])).stdout;
    expect(conn).toContain("secret = <redacted>");
    expect(list).not.toContain("run/ikev2/swanctl.conf");
    const everything = (await exec.run(["sh", "-c", 'tar -xzOf "$1"', "sh", archive])).stdout;
    expect(everything).not.toContain("generated-tunnel-secret-0001");
    expect(everything).not.toContain("dt_supersecret");
    expect(everything).toContain('"psk": "<redacted>"');
    expect(everything).toContain("swanctl.conf: private file (mode 600) left out");
    // Default destination: <state-dir>/dumps.
    const d2 = await cli(["dump", ...common], { ...deps(), runner: mixed });
    expect(d2.out.trim().startsWith(join(dirs.stateDir, "dumps", "tern-agent-dump-"))).toBe(true);
  });
});
