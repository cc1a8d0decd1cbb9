/**
 * The whole agent end to end: two real `tern-agent run` processes in two
 * router namespaces, registered with and driven by the fake control server
 * over a management veth, each given a full DeviceConfig (interfaces,
 * routes, DHCP, eBGP multihop, LAN 1:1 NAT, an IKEv2 tunnel with PFS, VRRP,
 * a link-quality policy, management QoS). Then: the tunnel, BGP, NAT, DHCP,
 * VRRP and tunnel measurements are checked on the real system, a repeat
 * changes nothing, the empty config removes everything, and a kill -9 in
 * the middle of an apply converges after a restart. Apply times and the
 * agent's memory are printed.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Netns, Netns as NetnsClass, privilegedTestsEnabled, run } from "@tern/netlab";
import { configHash, type DeviceConfig, emptyDeviceConfig, type Status } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRIVER_ORDER } from "../../src/drivers/driver.ts";
import { routerAConfig, routerBConfig, TUNNEL_ID } from "../support/edge-configs.ts";
import { AgentDaemon, agentCommand, buildEdgeLab, type EdgeLab, type EdgeRouter, otherProcesses } from "../support/edge-lab.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { addressesOf, ipJson, routesOf } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("tern-agent end to end (two routers)", [
  "charon-systemd",
  "swanctl",
  "/usr/lib/frr/zebra",
  "keepalived",
  "kea-dhcp4",
  "dhclient",
  "nft",
  "conntrack",
  "fping",
  "start-stop-daemon",
]);

/** Runs dhclient once on the host's eth0 with a script that only records the lease, then configures what it got. */
async function leaseFor(host: Netns, dir: string, name: string): Promise<Record<string, string>> {
  const base = join(dir, name);
  await writeFile(
    `${base}.sh`,
    `#!/bin/sh\n[ "$reason" = BOUND ] || exit 0\n{ for v in new_ip_address new_subnet_mask new_routers new_dhcp_lease_time new_host_name new_domain_name_servers; do eval "echo $v=\\$$v"; done; } > ${base}.lease\nexit 0\n`,
  );
  await chmod(`${base}.sh`, 0o755);
  await host.exec(
    ["timeout", "30", "dhclient", "-4", "-1", "-sf", `${base}.sh`, "-lf", `${base}.leases`, "-pf", `${base}.pid`, "eth0"],
    { timeoutMs: 35_000 },
  );
  const lease = Object.fromEntries(
    (await readFile(`${base}.lease`, "utf8"))
      .trim()
      .split("\n")
      .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
  // What a normal dhclient-script would do (this one must not touch the host's resolv.conf).
  await host.exec(["ip", "addr", "add", `${lease.new_ip_address}/24`, "dev", "eth0"]);
  await host.exec(["ip", "route", "add", "default", "via", String(lease.new_routers).split(" ")[0] ?? ""]);
  await run(["sh", "-c", 'kill "$(cat "$1")" 2>/dev/null; true', "sh", `${base}.pid`]);
  return lease;
}

/** What the agent owns on a router, as text (empty after a teardown). */
async function agentState(ns: Netns): Promise<Record<string, unknown>> {
  const tables = (await ns.exec(["nft", "list", "tables"])).stdout
    .split("\n")
    .filter((l) => l.includes("tern"))
    .map((l) => l.trim());
  const rules = (await ipJson<{ priority: number }[]>(ns, ["-4", "rule", "show"])).filter(
    (r) => r.priority >= 30000 && r.priority < 30255,
  );
  const policyRoutes = (await ns.exec(["ip", "-4", "route", "show", "table", "30000"], { allowFailure: true })).stdout.trim();
  const addresses: Record<string, string[]> = {};
  for (const dev of ["lo", "wan0", "wan1", "lan0"]) {
    const a = await addressesOf(ns, dev).catch(() => null);
    if (a) addresses[dev] = a.filter((x) => x !== "127.0.0.1/8");
  }
  const htb = (await ns.exec(["tc", "qdisc", "show"])).stdout.split("\n").filter((l) => l.startsWith("qdisc htb"));
  return {
    tables,
    rules,
    policyRoutes,
    routes: [...(await routesOf(ns, "proto", "57")), ...(await routesOf(ns, "proto", "58"))],
    addresses,
    htb,
    forwarding: (await ns.exec(["sysctl", "-n", "net.ipv4.ip_forward"])).stdout.trim(),
  };
}

describe.runIf(enabled)(
  "tern-agent end to end: two routers, a WAN, LAN hosts, the fake control server",
  { timeout: 120_000 },
  () => {
    let root: string;
    let lab: EdgeLab;
    let server: FakeControlServer;
    const daemons: AgentDaemon[] = [];
    const device: Record<"a" | "b", string> = { a: "", b: "" };
    const config: Partial<Record<"a" | "b", DeviceConfig>> = {};
    const figures: string[] = [];
    let agentA: AgentDaemon;
    let agentB: AgentDaemon;

    const start = async (r: EdgeRouter): Promise<AgentDaemon> => {
      const d = new AgentDaemon(r);
      daemons.push(d);
      return d;
    };
    const statusOf = (id: string, pred: (s: Status) => boolean, timeoutMs = 30_000) =>
      server.waitFrom(id, "status", pred, timeoutMs);
    /** Waits until router A reaches router B's tunnel loopback from its own (through the IKEv2 tunnel). */
    const tunnelPings = (what: string) =>
      NetnsClass.waitFor(
        what,
        async () =>
          (await lab.a.ns.exec(["ping", "-c", "1", "-W", "1", "-I", "10.100.0.4", "10.100.0.5"], { allowFailure: true }))
            .exitCode === 0,
        30_000,
        200,
      );

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), "tern-e2e-"));
      // FRR drops to its own user: the state dirs below must be searchable (a real agent creates them 0755).
      await chmod(root, 0o755);
      lab = await buildEdgeLab(root);
      server = await FakeControlServer.start({ host: lab.serverAddress, statusIntervalMs: 1000 });
      for (const r of [lab.a, lab.b]) {
        // The fake server speaks plain http on the lab's management veth (not this namespace's loopback).
        const reg = await agentCommand(r, ["register", "--server", server.url, "--token", "rt_test", "--insecure"]);
        expect(reg.stderr).toBe("");
        expect(reg.exitCode).toBe(0);
        device[r.label] = JSON.parse(await readFile(join(r.stateDir, "device.json"), "utf8")).deviceId;
      }
      config.a = routerAConfig(device.a, lab.a);
      config.b = routerBConfig(device.b, lab.b);
      agentA = await start(lab.a);
      agentB = await start(lab.b);
      await server.waitFrom(device.a, "hello", () => true, 30_000);
      await server.waitFrom(device.b, "hello", () => true, 30_000);
    }, 90_000);

    afterAll(async () => {
      for (const d of daemons) {
        if (d.child.exitCode === null) console.log(`agent ${d.router.label} log tail:\n${await d.logTail(15)}`);
        await d.kill9();
      }
      if (figures.length) console.log(`end-to-end figures:\n  ${figures.join("\n  ")}`);
      await server?.stop();
      await lab?.cleanup();
      await rm(root, { recursive: true, force: true });
    }, 60_000);

    it("applies a full config on both routers: apply-result ok with the config's hash", async () => {
      const idle = await agentA.rssKb();
      const b = await server.apply(config.b!, { deviceId: device.b });
      expect(b.error).toBeUndefined();
      expect(b).toMatchObject({ ok: true, appliedHash: configHash(config.b!), rolledBack: false });

      let peak = 0;
      const sampler = setInterval(() => void agentA.rssKb().then((kb) => (peak = Math.max(peak, kb))), 20);
      const t0 = performance.now();
      const a = await server.apply(config.a!, { deviceId: device.a });
      const ms = performance.now() - t0;
      clearInterval(sampler);
      expect(a.error).toBeUndefined();
      expect(a).toMatchObject({ ok: true, appliedHash: configHash(config.a!), rolledBack: false });
      // No modem or access point in this lab: lte and wifi run with nothing to do.
      expect(a.drivers.map((d) => `${d.driver} ${d.ok} ${d.changed}`)).toEqual(
        DRIVER_ORDER.map((d) => `${d} true ${d !== "lte" && d !== "wifi"}`),
      );
      figures.push(
        `full config on router A: apply → apply-result ${ms.toFixed(0)} ms (${a.drivers.map((d) => `${d.driver} ${d.durationMs}`).join(", ")})`,
      );
      figures.push(
        `agent RSS: ${(idle / 1024).toFixed(1)} MiB idle before the first apply, ${(peak / 1024).toFixed(1)} MiB peak during it`,
      );
    });

    it("brings the IKEv2 tunnel up: the routers ping each other over the tunnel loopbacks", async () => {
      await tunnelPings("a ping over the tunnel");
      const sas = (
        await lab.a.ns.exec(["swanctl", "--list-sas", "--uri", `unix://${join(lab.a.stateDir, "run", "ikev2", "charon.vici")}`])
      ).stdout;
      expect(sas).toMatch(/tern-device-1: #\d+, ESTABLISHED, IKEv2/);
    });

    it("has eBGP multihop Established between the WAN addresses (bgp-status request)", async () => {
      let last: unknown = null;
      await NetnsClass.waitFor(
        "BGP Established",
        async () => {
          const r = await server.request("bgp-status", {}, device.a);
          last = r;
          return r.ok && (r.result as { neighbors: { state: string }[] }).neighbors[0]?.state === "Established";
        },
        45_000,
        500,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; last answer ${JSON.stringify(last)}`);
      });
      const r = await server.request("bgp-status", {}, device.a);
      expect(r.result).toMatchObject({ running: true, localASN: 65001, neighbors: [{ ip: "10.100.2.2", remoteASN: 65002 }] });
      // B's LAN arrived at A through BGP.
      await expect
        .poll(async () => (await routesOf(lab.a.ns, "192.168.60.0/24")).join(), { timeout: 20_000, interval: 200 })
        .toMatch(/via 10\.100\.1\.1 dev wan0 .*proto bgp/);
    });

    it("serves DHCP on both LANs (reservations, the VRRP address as router) and is VRRP master there", async () => {
      const leaseA = await leaseFor(lab.hostA, root, "host-a");
      expect(leaseA).toMatchObject({ new_ip_address: "192.168.50.20", new_routers: "192.168.50.1", new_dhcp_lease_time: "3600" });
      const leaseB = await leaseFor(lab.hostB, root, "host-b");
      expect(leaseB).toMatchObject({ new_ip_address: "192.168.60.20", new_routers: "192.168.60.1", new_host_name: "nas" });
      const master = (s: Status) => s.vrrp.some((v) => v.state === "MASTER");
      expect((await statusOf(device.a, master)).vrrp[0]).toMatchObject({ groupId: config.a!.vrrp[0]!.groupId, state: "MASTER" });
      await statusOf(device.b, master);
      expect(await addressesOf(lab.a.ns, "lan0")).toContain("192.168.50.1/24");
    });

    it("translates LAN traffic 1:1 on the tunnel side: host A reaches host B's translated address, seen in conntrack", async () => {
      await NetnsClass.waitFor(
        "host A → host B (10.60.0.20) through the tunnel",
        async () => (await lab.hostA.exec(["ping", "-c", "1", "-W", "1", "10.60.0.20"], { allowFailure: true })).exitCode === 0,
        20_000,
        200,
      );
      const ctA = (await lab.a.ns.exec(["conntrack", "-L", "-p", "icmp"])).stdout;
      expect(ctA).toMatch(/src=192\.168\.50\.20 dst=10\.60\.0\.20 .* src=10\.60\.0\.20 dst=10\.50\.0\.20/);
      const ctB = (await lab.b.ns.exec(["conntrack", "-L", "-p", "icmp"])).stdout;
      expect(ctB).toMatch(/src=10\.50\.0\.20 dst=10\.60\.0\.20 .* src=192\.168\.60\.20 dst=10\.50\.0\.20/);
    });

    it("reports tunnel loss, RTT and jitter in status messages, tern-agent status, the page and the dump", async () => {
      const s = await statusOf(device.a, (m) => {
        const t = m.tunnels.find((x) => x.id === TUNNEL_ID);
        return t?.up === true && t.samples >= 10 && t.rtt > 0;
      });
      const t = s.tunnels.find((x) => x.id === TUNNEL_ID)!;
      expect(t.loss).toBeLessThanOrEqual(10);
      expect(t.jitter).toBeGreaterThanOrEqual(0);
      figures.push(
        `tunnel ${TUNNEL_ID.slice(-3)} as router A reports it: loss ${t.loss} %, rtt ${t.rtt} ms, jitter ${t.jitter} ms over ${t.samples} probes`,
      );
      const q = await server.request("tunnel-quality", {}, device.a);
      expect(q.result).toEqual([expect.objectContaining({ id: TUNNEL_ID, up: true })]);

      const st = await agentCommand(lab.a, ["status"]);
      expect(st.exitCode).toBe(0);
      expect(st.stdout).toMatch(new RegExp(`${TUNNEL_ID} +up +loss [\\d.]+%  rtt [\\d.]+ ms  jitter [\\d.]+ ms`));
      expect(st.stdout).toMatch(/ikev2:\n {2}tern-device-1 up: IKE ESTABLISHED/);
      expect(st.stdout).toMatch(/ {2}ikev2 +ok/);
      expect(st.stdout).toContain(`QoS marks the control link to ${lab.serverAddress}:${server.port}`);

      // The troubleshooting page of router A, from inside its namespace, with the secret the agent made.
      const secret = (await readFile(join(lab.a.stateDir, "ui-secret"), "utf8")).trim();
      const page = await lab.a.ns.exec([
        process.execPath,
        "-e",
        "fetch('http://127.0.0.1:8088/api/status',{headers:{authorization:'Bearer '+process.argv[1]}}).then(r=>r.text()).then(t=>process.stdout.write(t))",
        // The secret is random base64url: one in 64 starts with "-", which node would read as its own option.
        "--",
        secret,
      ]);
      const ui = JSON.parse(page.stdout) as { tunnels: { id: string; up: boolean }[]; vrrp: { state: string }[] };
      expect(ui.tunnels).toEqual([expect.objectContaining({ id: TUNNEL_ID, up: true })]);
      expect(ui.vrrp[0]?.state).toBe("MASTER");

      const dumped = await agentCommand(lab.a, ["dump", "--dest", join(root, "dumps")]);
      expect(dumped.exitCode, dumped.stderr).toBe(0);
      const archive = dumped.stdout.trim();
      const files = (await run(["tar", "-tzf", archive])).stdout;
      const item = async (path: string) =>
        (await run(["sh", "-c", `tar -xzOf "$1" --wildcards "*/${path}"`, "sh", archive])).stdout;
      for (const f of ["drivers/ikev2/swanctl-list-sas.txt", "drivers/bgp/show-bgp-summary.txt", "drivers/vrrp/states.json"])
        expect(files).toContain(f);
      expect(await item("drivers/ikev2/swanctl-list-sas.txt")).toContain("ESTABLISHED");
      expect(await item("drivers/bgp/show-bgp-summary.txt")).toContain("10.100.2.2");
      expect(await item("drivers/firewall/nft-table-tern.txt")).toContain("snat ip prefix to ip saddr map");
      expect(await item("drivers/policy/ip-rule.json")).toContain('"priority":30000');
      expect(await item("drivers/dhcp/kea-dhcp4.conf")).toContain("192.168.50.20");
      expect(await item("drivers/ikev2/tern-device-1.conf")).toContain("secret = <redacted>");
      // The PSK is nowhere in the archive.
      const psk = await run(["sh", "-c", 'tar -xzOf "$1" | grep -c generated-tunnel-secret || true', "sh", archive]);
      expect(psk.stdout.trim()).toBe("0");
    });

    it("re-sending the same config changes nothing; a one-field change touches one driver", async () => {
      for (const r of ["a", "b"] as const) {
        const t = performance.now();
        const again = await server.apply(config[r]!, { deviceId: device[r] });
        if (r === "a")
          figures.push(`same config again on router A: apply → apply-result ${(performance.now() - t).toFixed(0)} ms`);
        expect(again.ok).toBe(true);
        expect(again.drivers.filter((d) => d.changed)).toEqual([]);
      }
      const changed = structuredClone(config.a!);
      changed.dhcp[0]!.defaultLeaseTime = 1800;
      const t0 = performance.now();
      const one = await server.apply(changed, { deviceId: device.a });
      figures.push(
        `one-field change (DHCP default lease) on router A: apply → apply-result ${(performance.now() - t0).toFixed(0)} ms`,
      );
      expect(one.ok).toBe(true);
      expect(one.drivers.filter((d) => d.changed).map((d) => d.driver)).toEqual(["dhcp"]);
      config.a = changed;
      figures.push(`agent RSS idle after the applies: ${((await agentA.rssKb()) / 1024).toFixed(1)} MiB`);
    });

    it("the empty config tears everything down: no daemons, no agent tables, rules, routes or addresses", async () => {
      for (const r of [lab.a, lab.b]) {
        const empty = emptyDeviceConfig(device[r.label]);
        const out = await server.apply(empty, { deviceId: device[r.label] });
        expect(out).toMatchObject({ ok: true, appliedHash: configHash(empty) });
        const agent = r.label === "a" ? agentA : agentB;
        // Daemons get TERM, then KILL after 5 s: on a loaded host that can take a while.
        await expect.poll(() => otherProcesses(r.ns, [agent.pid]), { timeout: 30_000, interval: 200 }).toEqual([]);
        expect(await agentState(r.ns)).toEqual({
          tables: [],
          rules: [],
          policyRoutes: "",
          routes: [],
          addresses: r.label === "a" ? { lo: [], wan0: [], wan1: [], lan0: [] } : { lo: [], wan0: [], lan0: [] },
          htb: [],
          forwarding: "0",
        });
      }
    });

    it("converges after kill -9 in the middle of an apply and a restart", async () => {
      await server.apply(config.b!, { deviceId: device.b });
      const charonPid = join(lab.a.stateDir, "run", "ikev2", "charon.pid");
      const applying = server.apply(config.a!, { deviceId: device.a, timeoutMs: 60_000 }).catch(() => null);
      await NetnsClass.waitFor(
        "charon started by the apply",
        // start-stop-daemon writes the pid file before it execs charon: wait
        // until that pid carries charon's name.
        async () => {
          const pid = (await readFile(charonPid, "utf8").catch(() => "")).trim();
          if (pid === "") return false;
          const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "");
          return comm.startsWith("charon");
        },
        30_000,
        5,
      );
      const hellos = server.messagesFrom(device.a, "hello").length;
      await agentA.kill9();
      void applying;
      await expect(stat(join(lab.a.stateDir, "pending.json"))).resolves.toBeTruthy();
      // The interrupted apply left a running charon and addresses behind.
      expect((await otherProcesses(lab.a.ns, [])).join()).toMatch(/charon/);

      const t0 = performance.now();
      agentA = await start(lab.a);
      await NetnsClass.waitFor(
        "a hello from the restarted agent",
        async () => server.messagesFrom(device.a, "hello").length > hellos,
        60_000,
      );
      // It still runs its last good config (the empty one): the interrupted apply never became "good".
      expect(server.messagesFrom(device.a, "hello").at(-1)?.appliedHash).toBe(configHash(emptyDeviceConfig(device.a)));
      // Restart restored the last good config (empty): what the cut apply started is gone.
      await expect.poll(() => otherProcesses(lab.a.ns, [agentA.pid]), { timeout: 30_000, interval: 200 }).toEqual([]);
      expect((await agentState(lab.a.ns)).addresses).toEqual({ lo: [], wan0: [], wan1: [], lan0: [] });
      // The interrupted apply's marker is gone once the restore finished.
      await NetnsClass.waitFor(
        "pending.json removed",
        async () => (await stat(join(lab.a.stateDir, "pending.json")).catch(() => null)) === null,
        10_000,
      );

      // The server sends its config again (as its dispatcher does after a hello with an old hash): it converges.
      const again = await server.apply(config.a!, { deviceId: device.a });
      expect(again).toMatchObject({ ok: true, appliedHash: configHash(config.a!) });
      await tunnelPings("the tunnel after the restart");
      figures.push(`kill -9 mid-apply → restart → restored and re-applied, tunnel up: ${(performance.now() - t0).toFixed(0)} ms`);
      const snap = JSON.parse(await readFile(join(lab.a.stateDir, "run", "status.json"), "utf8"));
      expect(JSON.stringify(snap.recentErrors)).toContain("was interrupted (agent stopped mid-apply)");
      expect(server.invalid).toEqual([]);
      // Both agents stop cleanly; the routers stay configured.
      for (const d of [agentA, agentB]) expect(await d.stop()).toBe(0);
      expect(await addressesOf(lab.a.ns, "wan0")).toEqual(["10.100.1.2/24"]);
    });
  },
);
