/** DHCP config sequences against a fake runner and process table: check, start, HUP on change, stop. */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DhcpDriver } from "../../src/drivers/dhcp/index.ts";
import { configWith, fullConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { mutatingCommands } from "../support/mutating.ts";

const full = fullConfig();
const A = configWith({ interfaces: full.interfaces, dhcp: full.dhcp });
/** B: the LAN address moved within the subnet; nothing else changed. */
const B = configWith({
  interfaces: full.interfaces.map((i) => (i.name === "lan0" ? { ...i, address: "192.168.50.3/24" } : i)),
  dhcp: full.dhcp,
});
const EMPTY = configWith({});

describe("dhcp config sequence (fake runner)", () => {
  let dir: TempDirs;
  let fake: FakeRunner;
  let procs: FakeProcesses;
  let ctx: TestContext;
  beforeEach(async () => {
    dir = await tempDirs("dhcp-seq");
    fake = new FakeRunner();
    procs = new FakeProcesses(fake);
    ctx = driverContext(fake, join(dir.root, "run"));
    procs.daemon(/^start-stop-daemon --start .*kea-dhcp4/, "kea-dhcp4", () => join(ctx.runDir, "dhcp/kea-dhcp4.kea-dhcp4.pid"));
  });
  afterEach(() => dir.remove());

  const step = async (driver: DhcpDriver, config: DeviceConfig) => {
    fake.clear();
    const { changed } = await driver.apply(config, ctx);
    return { changed, all: fake.lines().map((l) => l.replaceAll(dir.root, "<tmp>")), mutating: mutatingCommands(fake.calls) };
  };

  it("A → B (LAN address change) → A → A → empty → empty", async () => {
    const driver = new DhcpDriver();
    const a = await step(driver, A);
    expect(a.all).toEqual([
      "/usr/sbin/kea-dhcp4 -t <tmp>/run/dhcp/kea-dhcp4.check.conf",
      "start-stop-daemon --start --background --pidfile <tmp>/run/dhcp/kea-dhcp4.kea-dhcp4.pid --output <tmp>/run/dhcp/kea-dhcp4.out --exec /usr/sbin/kea-dhcp4 -- -c <tmp>/run/dhcp/kea-dhcp4.conf",
      expect.stringMatching(/^ps -o stat=,comm= -p \d+$/),
      "test -S <tmp>/run/dhcp/kea4-ctrl.sock",
    ]);
    expect(fake.calls[0]?.options.env).toEqual({
      KEA_PIDFILE_DIR: join(ctx.runDir, "dhcp"),
      KEA_LOCKFILE_DIR: join(ctx.runDir, "dhcp"),
    });
    const pid = procs.pids("kea-dhcp4")[0];
    const b = await step(driver, B);
    expect(b.mutating).toEqual([`kill -s HUP ${pid}`]);
    expect(
      JSON.parse(await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.conf"), "utf8")).Dhcp4["interfaces-config"].interfaces,
    ).toEqual(["lan0/192.168.50.3"]);
    expect((await step(driver, A)).mutating).toEqual([`kill -s HUP ${pid}`]);
    expect(await step(driver, A)).toMatchObject({ changed: false, mutating: [] });
    expect((await step(driver, EMPTY)).mutating).toEqual([`kill -s TERM ${pid}`]);
    await expect(readdir(join(ctx.runDir, "dhcp"))).rejects.toThrow();
    expect(await step(driver, EMPTY)).toMatchObject({ changed: false, mutating: [] });
  });

  it("a config kea rejects is not installed and the running server is left alone", async () => {
    const driver = new DhcpDriver();
    await step(driver, A);
    const before = await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.conf"), "utf8");
    fake.on(/kea-dhcp4 -t/, {
      exitCode: 1,
      stderr: "2026 ERROR [kea-dhcp4.dhcp4] DHCP4_CONFIG_LOAD_FAIL configuration error: option data does not match\n",
    });
    const changed = configWith({ ...A, dhcp: [{ ...full.dhcp[0]!, options: [{ code: 26, name: "mtu", value: "huge" }] }] });
    fake.clear();
    await expect(driver.apply(changed, ctx)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringMatching(/DHCP4_CONFIG_LOAD_FAIL/),
    });
    expect(await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.conf"), "utf8")).toBe(before);
    expect(mutatingCommands(fake.calls)).toEqual([]);
  });

  it("uses the live address when the config has none for the interface", async () => {
    const driver = new DhcpDriver();
    fake.on(/^ip -j -4 addr show dev lan0$/, {
      stdout: JSON.stringify([{ ifname: "lan0", addr_info: [{ family: "inet", local: "192.168.50.9", prefixlen: 24 }] }]),
    });
    await step(driver, configWith({ dhcp: full.dhcp }));
    expect(
      JSON.parse(await readFile(join(ctx.runDir, "dhcp/kea-dhcp4.conf"), "utf8")).Dhcp4["interfaces-config"].interfaces,
    ).toEqual(["lan0/192.168.50.9"]);
  });
});

describe("dhcp in system mode (fake runner)", () => {
  it("uses kea-dhcp4-server.service: start, SIGHUP through systemctl, stop", async () => {
    const dir = await tempDirs("dhcp-sys");
    try {
      const fake = new FakeRunner();
      let active = false;
      fake.on(/^systemctl is-active --quiet kea-dhcp4-server$/, () => ({ exitCode: active ? 0 : 3 }));
      fake.on(/^systemctl (start|stop) kea-dhcp4-server$/, (a) => {
        active = a[1] === "start";
        return {};
      });
      const ctx = driverContext(fake, join(dir.root, "run"), { mode: "system" });
      const driver = new DhcpDriver({ sysRoot: join(dir.root, "root") });
      const run = async (c: DeviceConfig) => {
        fake.clear();
        await driver.apply(c, ctx);
        return mutatingCommands(fake.calls);
      };
      expect(await run(A)).toEqual(["systemctl start kea-dhcp4-server"]);
      expect(await readFile(join(dir.root, "root/etc/kea/kea-dhcp4.conf"), "utf8")).toMatch(
        /"name": "\/var\/lib\/kea\/kea-leases4.csv"/,
      );
      expect(await run(A)).toEqual([]);
      expect(await run(B)).toEqual(["systemctl kill --signal=HUP --kill-who=main kea-dhcp4-server"]);
      expect(await run(EMPTY)).toEqual(["systemctl stop kea-dhcp4-server"]);
    } finally {
      await dir.remove();
    }
  });
});
