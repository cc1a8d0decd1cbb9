/**
 * The real `tern-agent` program inside a namespace router: `apply` from the
 * command line, a kill -9 in the middle of an apply followed by a restart
 * that converges, and register → run → apply/request against the fake
 * control server (reached from inside the namespace through a small relay to
 * a unix socket, since namespaces share the file system but not loopback).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Netns, Netns as NetnsClass, NetnsScope, privilegedTestsEnabled, run } from "@tern/netlab";
import { configHash, type DeviceConfig } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentSnapshot } from "../../src/daemon/snapshot.ts";
import { iface, linksConfig, route } from "../support/configs.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { addressesOf, mtuOf, routesOf } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("tern-agent program in namespaces", ["ip", "ping", "tar", "ss"]);
const BIN = fileURLToPath(new URL("../../bin/tern-agent", import.meta.url));

const A = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.2/24", gateway: "10.100.1.1", metric: 5 }),
    iface("lan0", { address: "192.168.50.1/24" }),
  ],
  [route("172.16.0.0/16", "10.100.1.1", { ifname: "wan0", metric: 10 })],
);
const B = linksConfig(
  [
    iface("wan0", { type: "WAN", address: "10.100.1.3/24", gateway: "10.100.1.1", metric: 7 }),
    iface("lan0", { address: "192.168.60.1/24", mtu: 1400 }),
  ],
  Array.from({ length: 10 }, (_, i) => route(`10.${201 + i}.0.0/16`, "10.100.1.1", { metric: 20 })),
);

async function expectState(ns: Netns, config: DeviceConfig): Promise<void> {
  for (const i of config.interfaces) {
    expect(await addressesOf(ns, i.name)).toEqual(i.address ? [i.address] : []);
    expect(await mtuOf(ns, i.name)).toBe(i.mtu);
  }
  const expected = [
    ...config.interfaces
      .filter((i) => i.type === "WAN" && i.gateway)
      .map((i) => `default via ${i.gateway} dev ${i.name} metric ${i.metric}`),
    ...config.routes.map((r) => `${r.destination} via ${r.gateway} dev ${r.ifname ?? "wan0"} metric ${r.metric}`),
  ];
  expect((await routesOf(ns, "proto", "57")).sort()).toEqual(expected.sort());
}

describe.runIf(enabled)("tern-agent in a namespace router", { timeout: 90_000 }, () => {
  const scope = new NetnsScope("agcli");
  let edge: Netns;
  let root: string;
  let stateDir: string;
  const children: ChildProcess[] = [];
  const agent = (args: string[], env: Record<string, string> = {}) =>
    run(
      ["ip", "netns", "exec", edge.name, "env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), BIN, ...args, ...common()],
      {
        allowFailure: true,
        timeoutMs: 60_000,
      },
    );
  const common = () => ["--state-dir", stateDir, "--mode", "standalone", "--hostname", "edge-a", "--log-level", "error"];
  const configFile = async (config: DeviceConfig, name: string) => {
    const path = join(root, name);
    await writeFile(path, JSON.stringify(config));
    return path;
  };
  const snapshot = async () => JSON.parse(await readFile(join(stateDir, "run", "status.json"), "utf8")) as AgentSnapshot;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "tern-agent-netns-"));
    stateDir = join(root, "state");
    edge = await scope.netns("edge");
    const wan = await scope.netns("wan");
    await scope.veth(edge, "wan0", wan, "up0");
    await scope.veth(edge, "lan0", wan, "lanpeer0");
    await wan.addAddress("up0", "10.100.1.1/24");
  });
  afterAll(async () => {
    for (const c of children)
      try {
        if (c.pid) process.kill(-c.pid, "SIGKILL");
      } catch {
        // already gone
      }
    await scope.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  it("apply CONFIG.json configures the router; status says no daemon runs", async () => {
    const r = await agent(["apply", await configFile(A, "a.json")]);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^applied ${configHash(A)} in \\d+ ms\\n  links +ok +changed`));
    await expectState(edge, A);
    const st = await agent(["status"]);
    expect(st.exitCode).toBe(3);
    expect(st.stdout).toContain(`applied config: ${configHash(A)}`);
  });

  it("converges after kill -9 in the middle of an apply, on restart", async () => {
    // Every mutating `ip` waits 0.4 s, so the apply of B is slow enough to be cut in the middle.
    const shim = join(root, "shim");
    await run(["mkdir", "-p", shim]);
    await writeFile(join(shim, "ip"), '#!/bin/sh\ncase " $* " in *" -j "*) ;; *) sleep 0.4 ;; esac\nexec /usr/sbin/ip "$@"\n');
    await chmod(join(shim, "ip"), 0o755);
    const child = spawn(
      "ip",
      [
        "netns",
        "exec",
        edge.name,
        "env",
        `PATH=${shim}:${process.env.PATH}`,
        BIN,
        "apply",
        await configFile(B, "b.json"),
        ...common(),
      ],
      { detached: true, stdio: "ignore" },
    );
    children.push(child);
    await NetnsClass.waitFor(
      "the first address of B",
      async () => (await addressesOf(edge, "wan0")).includes("10.100.1.3/24"),
      20_000,
      20,
    );
    // Power cut: the whole process group (agent, shim, sleeping ip) dies at once.
    process.kill(-(child.pid ?? 0), "SIGKILL");
    await new Promise((r) => child.once("exit", r));
    await expect(stat(join(stateDir, "pending.json"))).resolves.toBeTruthy();
    const partial = (await routesOf(edge, "proto", "57")).length;
    expect(partial).toBeLessThan(B.routes.length + 1);

    // Restart: the daemon (no server registered) restores the last good config A.
    const daemon = spawn("ip", ["netns", "exec", edge.name, BIN, "run", "--metrics-port", "0", ...common()], {
      detached: true,
      stdio: "ignore",
    });
    children.push(daemon);
    await NetnsClass.waitFor(
      "the restore",
      async () => (await snapshot().catch(() => null))?.lastApply?.source === "restore",
      20_000,
    );
    const snap = await snapshot();
    expect(snap).toMatchObject({
      appliedHash: configHash(A),
      lastApply: { ok: true },
      interrupted: null,
      connection: { state: "disabled" },
    });
    expect(snap.recentErrors[0]?.message).toBe(`the apply of ${configHash(B)} was interrupted (agent stopped mid-apply)`);
    await expectState(edge, A);
    await expect(stat(join(stateDir, "pending.json"))).rejects.toThrow(/ENOENT/);
    const st = await agent(["status"]);
    expect(st.exitCode).toBe(0);
    expect(st.stdout).toMatch(/connection: +disabled/);
    expect(st.stdout).toContain(`applied:     ${configHash(A)}`);
    // While the daemon runs, a local apply is refused rather than racing it.
    const refused = await agent(["apply", await configFile(B, "b.json")]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/LOCKED: another tern-agent \(pid \d+\) holds/);

    process.kill(daemon.pid ?? 0, "SIGTERM");
    expect(await new Promise((r) => daemon.once("exit", (code) => r(code)))).toBe(0);
    expect((await agent(["status"])).exitCode).toBe(3);

    // And applying B again now converges to B.
    const again = await agent(["apply", await configFile(B, "b.json")]);
    expect(again.exitCode).toBe(0);
    await expectState(edge, B);
  });

  it("registers, connects, applies, answers requests and serves metrics against the fake server", async () => {
    const sock = join(root, "control.sock");
    const server = await FakeControlServer.start({ socketPath: sock, statusIntervalMs: 300 });
    try {
      // Relay 127.0.0.1:8080 inside the namespace to the server's unix socket.
      scope.spawn(edge, [
        process.execPath,
        "-e",
        "const n=require('node:net');n.createServer(c=>{const u=n.connect(process.argv[1]);c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())}).listen(8080,'127.0.0.1')",
        sock,
      ]);
      await NetnsClass.waitFor(
        "the relay to listen",
        async () => (await edge.exec(["ss", "-Hltn", "sport", "= :8080"])).stdout.includes("127.0.0.1:8080"),
        10_000,
      );
      const reg = await agent(["register", "--server", "http://127.0.0.1:8080", "--token", "rt_test"]);
      expect(reg.stderr).toBe("");
      expect(reg.exitCode).toBe(0);
      expect(server.registrations[0]?.interfaces.map((i) => i.name).sort()).toEqual(["lan0", "wan0"]);
      expect(server.registrations[0]?.interfaces.every((i) => /^mac:([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(i.devId))).toBe(true);

      const daemon = spawn("ip", ["netns", "exec", edge.name, BIN, "run", "--metrics-port", "9464", ...common()], {
        detached: true,
        stdio: "ignore",
      });
      children.push(daemon);
      const hello = await server.waitFor("hello", () => true, 20_000);
      expect(hello.appliedHash).toBe(configHash(B));

      const result = await server.apply(A);
      expect(result).toMatchObject({ ok: true, appliedHash: configHash(A) });
      expect(result.drivers.map((d) => d.driver)).toEqual([
        "links",
        "lte",
        "wifi",
        "firewall",
        "ikev2",
        "bgp",
        "vrrp",
        "dhcp",
        "policy",
        "qos",
      ]);
      expect(result.drivers[0]).toMatchObject({ driver: "links", ok: true, changed: true });
      await expectState(edge, A);
      expect((await server.apply(A)).drivers.filter((d) => d.changed)).toEqual([]);

      const wanDevId = A.interfaces[0]?.devId;
      expect(await server.request("interface-status", { devId: wanDevId })).toMatchObject({
        ok: true,
        result: { name: "wan0", IPv4: "10.100.1.2", IPv4Mask: 24, gateway: "10.100.1.1", operState: "up" },
      });
      const pinged = await server.request("ping", { target: "10.100.1.1", count: 2 });
      expect(pinged).toMatchObject({ ok: true, result: { transmitted: 2, received: 2, lossPercent: 0 } });
      const status = await server.waitFor("status", (s) => s.appliedHash === configHash(A) && s.health !== null, 10_000);
      expect(status.interfaces.find((i) => i.name === "wan0")?.IPv4).toBe("10.100.1.2");
      expect(status.health?.memoryPercent).toBeGreaterThan(0);

      const metrics = await edge.exec([
        process.execPath,
        "-e",
        "fetch('http://127.0.0.1:9464/metrics').then(r=>r.text()).then(t=>process.stdout.write(t))",
      ]);
      expect(metrics.stdout).toMatch(/^tern_agent_connected 1$/m);
      expect(metrics.stdout).toMatch(/^tern_agent_driver_apply_duration_seconds_count\{driver="links"\} [1-9]/m);
      expect(metrics.stdout).toMatch(/^tern_agent_applies_total\{result="ok"\} [1-9]/m);

      const st = await agent(["status"]);
      expect(st.stdout).toMatch(/connection: +connected since .* ws:\/\/127\.0\.0\.1:8080\/api\/connect\/ws/);
      const dumped = await agent(["dump"]);
      expect(dumped.exitCode).toBe(0);
      const list = (await run(["tar", "-tzf", dumped.stdout.trim()])).stdout;
      expect(list).toMatch(/\/drivers\/links\/ip-addr\.json$/m);
      expect(list).toMatch(/\/agent\/status\.json$/m);
      expect(server.invalid).toEqual([]);

      process.kill(daemon.pid ?? 0, "SIGTERM");
      expect(await new Promise((r) => daemon.once("exit", (code) => r(code)))).toBe(0);
      await expectState(edge, A);
    } finally {
      await server.stop();
    }
  });
});
