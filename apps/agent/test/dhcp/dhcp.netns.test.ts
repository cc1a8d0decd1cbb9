/**
 * DHCP driver against real kea-dhcp4 and a real ISC dhclient in throw-away
 * namespaces: lease times (default, capped at max, raised to min), options,
 * a reservation with its host name, and serving on after the LAN
 * interface's address changes.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled, run } from "@tern/netlab";
import type { ConfigDhcpServer, ConfigInterface, DeviceConfig } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DhcpDriver } from "../../src/drivers/dhcp/index.ts";
import { configWith } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { mutatingCommands } from "../support/mutating.ts";
import { NetnsRunner } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("dhcp driver (kea)", ["kea-dhcp4", "dhclient", "start-stop-daemon"]);

const lan = (address: string): ConfigInterface => ({
  devId: "mac:02:00:00:00:0a:02",
  name: "lan0",
  type: "LAN",
  dhcp: false,
  address,
  gateway: null,
  metric: 0,
  mtu: 1500,
  pathLabels: [],
});
const server = (net: string): ConfigDhcpServer => ({
  interface: "lan0",
  subnet: `${net}.0/24`,
  rangeStart: `${net}.100`,
  rangeEnd: `${net}.199`,
  dns: [`${net}.1`, "9.9.9.9"],
  options: [
    { code: 42, name: "ntp-servers", value: `${net}.1` },
    { code: 66, name: "tftp-server-name", value: "tftp.lab" },
    { code: 26, name: "interface-mtu", value: "1400" },
    { code: 15, name: "domain-name", value: "lab.example" },
    { code: 2, name: "time-offset", value: "3600" },
  ],
  reservations: [{ host: "printer", mac: "02:00:00:00:0b:01", ipv4: `${net}.20`, sendHostName: true }],
  defaultLeaseTime: 3600,
  maxLeaseTime: 7200,
});
const configA = configWith({ interfaces: [lan("192.168.50.1/24")], dhcp: [server("192.168.50")] });
/** The LAN moved to another subnet (as the links driver would apply it first). */
const configB = configWith({ interfaces: [lan("192.168.60.1/24")], dhcp: [server("192.168.60")] });

type Lease = Record<string, string>;

describe.runIf(enabled)("dhcp driver with real kea-dhcp4 and dhclient in namespaces", () => {
  const scope = new NetnsScope("dhcp");
  let dir: TempDirs;
  let edge: Netns;
  let client: Netns;
  let printer: Netns;
  let ctx: TestContext;
  const driver = new DhcpDriver();
  let n = 0;

  /** Runs dhclient once in `ns` (fresh lease file), returns what the script saw at BOUND, then releases. */
  async function lease(ns: Netns, extra = ""): Promise<Lease & { ms: string }> {
    n += 1;
    const base = join(dir.root, `c${n}`);
    const events = `${base}.events`;
    await writeFile(
      `${base}.sh`,
      `#!/bin/sh\n[ "$reason" = BOUND ] || exit 0\n{ for v in new_ip_address new_dhcp_lease_time new_dhcp_renewal_time new_dhcp_rebinding_time new_routers new_ntp_servers new_tftp_server_name new_interface_mtu new_domain_name new_domain_name_servers new_time_offset new_host_name new_dhcp_server_identifier; do eval "echo $v=\\$$v"; done; } > ${events}\nexit 0\n`,
    );
    await chmod(`${base}.sh`, 0o755);
    await writeFile(
      `${base}.conf`,
      `request subnet-mask, routers, ntp-servers, tftp-server-name, interface-mtu, domain-name, domain-name-servers, time-offset, host-name, dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;\n${extra}`,
    );
    const args = ["-4", "-sf", `${base}.sh`, "-lf", `${base}.leases`, "-pf", `${base}.pid`, "-cf", `${base}.conf`, "eth0"];
    const t0 = performance.now();
    await ns.exec(["timeout", "25", "dhclient", "-1", ...args], { timeoutMs: 30_000 });
    const ms = (performance.now() - t0).toFixed(0);
    await ns.exec(["dhclient", "-r", ...args], { allowFailure: true, timeoutMs: 15_000 });
    const text = await readFile(events, "utf8");
    return {
      ...Object.fromEntries(
        text
          .trim()
          .split("\n")
          .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
      ),
      ms,
    };
  }

  beforeAll(async () => {
    dir = await tempDirs("dhcp");
    edge = await scope.netns("edge");
    client = await scope.netns("client");
    printer = await scope.netns("printer");
    await edge.exec(["ip", "link", "add", "br-lan", "type", "bridge"]);
    await edge.up("br-lan");
    // lan0 is the edge's LAN port; two hosts hang off it through a bridge in the edge namespace.
    await scope.veth(edge, "lan0", edge, "lanb");
    await edge.exec(["ip", "link", "set", "lanb", "master", "br-lan"]);
    await scope.veth(client, "eth0", edge, "hc");
    await scope.veth(printer, "eth0", edge, "hp");
    await printer.exec(["ip", "link", "set", "eth0", "address", "02:00:00:00:0b:01"]);
    for (const port of ["hc", "hp"]) await edge.exec(["ip", "link", "set", port, "master", "br-lan"]);
    await edge.addAddress("lan0", "192.168.50.1/24");
    ctx = driverContext(new NetnsRunner(edge.name), join(dir.root, "edge"));
  }, 30_000);

  afterAll(async () => {
    await driver.apply(configWith({}), ctx).catch(() => {});
    await scope.cleanup();
    await dir?.remove();
  }, 30_000);

  it("serves the default lease time, T1/T2 and the options", async () => {
    await driver.apply(configA, ctx);
    const l = await lease(client);
    console.log(`dhcp: first lease in ${l.ms} ms (dhclient start → BOUND)`);
    expect(l).toMatchObject({
      new_ip_address: expect.stringMatching(/^192\.168\.50\.1\d\d$/),
      new_dhcp_lease_time: "3600",
      new_dhcp_renewal_time: "1800",
      new_dhcp_rebinding_time: "3150",
      new_routers: "192.168.50.1",
      new_ntp_servers: "192.168.50.1",
      new_tftp_server_name: "tftp.lab",
      new_interface_mtu: "1400",
      new_domain_name: "lab.example",
      new_domain_name_servers: "192.168.50.1 9.9.9.9",
      new_time_offset: "3600",
      new_dhcp_server_identifier: "192.168.50.1",
    });
  }, 60_000);

  it("caps a client asking for more than the max at maxLeaseTime, and raises a short ask to the minimum", async () => {
    expect((await lease(client, "send dhcp-lease-time 86400;\n")).new_dhcp_lease_time).toBe("7200");
    expect((await lease(client, "send dhcp-lease-time 60;\n")).new_dhcp_lease_time).toBe("900");
  }, 60_000);

  it("gives a reserved MAC its address and host name (option 12)", async () => {
    const l = await lease(printer);
    expect(l).toMatchObject({ new_ip_address: "192.168.50.20", new_host_name: "printer" });
  }, 60_000);

  it("re-applying the same config runs no mutating command", async () => {
    const r = ctx.runner as NetnsRunner;
    r.clear();
    expect((await driver.apply(configA, ctx)).changed).toBe(false);
    expect(mutatingCommands(r.calls)).toEqual([]);
  });

  it("keeps serving after the LAN interface's address changes", async () => {
    const pidBefore = (await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.kea-dhcp4.pid"), "utf8")).trim();
    await edge.exec(["ip", "addr", "del", "192.168.50.1/24", "dev", "lan0"]);
    await edge.addAddress("lan0", "192.168.60.1/24");
    // The reference's bug, as a control: until it is reconfigured, kea still serves the old subnet.
    const stale = await lease(client).catch(() => null);
    console.log(
      `dhcp: before reconfiguring, a client got ${stale ? `${stale.new_ip_address} from ${stale.new_dhcp_server_identifier}` : "nothing"}`,
    );
    expect(stale?.new_dhcp_server_identifier).not.toBe("192.168.60.1");
    const r = ctx.runner as NetnsRunner;
    r.clear();
    expect((await driver.apply(configB, ctx)).changed).toBe(true);
    expect(mutatingCommands(r.calls)).toEqual([`kill -s HUP ${pidBefore}`]);
    const l = await lease(client);
    expect(l).toMatchObject({
      new_ip_address: expect.stringMatching(/^192\.168\.60\.1\d\d$/),
      new_routers: "192.168.60.1",
      new_dhcp_server_identifier: "192.168.60.1",
    });
    const log = await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.log"), "utf8");
    expect(log).toMatch(/DHCP4_DYNAMIC_RECONFIGURATION_SUCCESS/);
  }, 60_000);

  it("an empty section stops kea and removes its files", async () => {
    await driver.apply(configWith({}), ctx);
    const left = (await run(["ip", "netns", "pids", edge.name])).stdout.trim();
    expect(left).toBe("");
    await expect(readFile(join(ctx.runDir, "dhcp/kea-dhcp4.conf"))).rejects.toThrow();
    const again = new NetnsRunner(edge.name);
    expect((await driver.apply(configWith({}) as DeviceConfig, { ...ctx, runner: again })).changed).toBe(false);
    expect(mutatingCommands(again.calls)).toEqual([]);
  }, 30_000);
});
