/** BGP config sequences against a fake runner and process table; repeats must not mutate. */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConfigBgp, DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BgpDriver } from "../../src/drivers/bgp/index.ts";
import { configWith, fullConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { argAfter, FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { mutatingCommands } from "../support/mutating.ts";

const bgp = fullConfig().bgp as ConfigBgp;
const A = configWith({ bgp });
/** B: the neighbor becomes directly connected (no multihop, so no nht line), a network added. */
const B = configWith({
  bgp: { ...bgp, neighbors: [{ ...bgp.neighbors[0]!, multiHop: 1 }], networks: [...bgp.networks, "10.50.0.0/24"] },
});
const EMPTY = configWith({});

describe("bgp config sequence (fake runner)", () => {
  let dir: TempDirs;
  let fake: FakeRunner;
  let procs: FakeProcesses;
  let ctx: TestContext;
  beforeEach(async () => {
    dir = await tempDirs("bgp-seq");
    fake = new FakeRunner();
    procs = new FakeProcesses(fake);
    procs.daemon(/^\/usr\/lib\/frr\/zebra /, "zebra", (a) => argAfter(a, "-i"));
    procs.daemon(/^\/usr\/lib\/frr\/bgpd /, "bgpd", (a) => argAfter(a, "-i"));
    ctx = driverContext(fake, join(dir.root, "run"));
  });
  afterEach(() => dir.remove());

  const step = async (driver: BgpDriver, config: DeviceConfig) => {
    fake.clear();
    const { changed } = await driver.apply(config, ctx);
    const commands = `${fake
      .lines()
      .map((l) => l.replaceAll(dir.root, "<tmp>"))
      .join("\n")}\n`;
    return { changed, commands, mutating: mutatingCommands(fake.calls) };
  };

  it("A → B → A → A → empty → empty", async () => {
    const driver = new BgpDriver();
    const a1 = await step(driver, A);
    expect(procs.pids("zebra")).toHaveLength(1);
    expect(procs.pids("bgpd")).toHaveLength(1);
    await expect(a1.commands).toMatchFileSnapshot("./golden/sequence-1-A.txt");

    const b = await step(driver, B);
    await expect(b.commands).toMatchFileSnapshot("./golden/sequence-2-B.txt");
    expect(b.mutating).toEqual([
      expect.stringMatching(/^chown frr:frr .*zebra\.conf .*bgpd\.conf$/),
      expect.stringMatching(/-d zebra -c configure terminal -c no ip nht resolve-via-default$/),
      expect.stringMatching(/frr-reload\.py --reload --daemon bgpd .*bgpd\.conf$/),
      expect.stringMatching(/-c clear bgp 10\.100\.2\.2$/),
    ]);
    expect(await readFile(join(ctx.runDir, "bgp/bgpd.conf"), "utf8")).toMatch(/network 10\.50\.0\.0\/24/);

    const a2 = await step(driver, A);
    expect(a2.mutating).toEqual([
      expect.stringMatching(/^chown /),
      expect.stringMatching(/-d zebra -c configure terminal -c ip nht resolve-via-default$/),
      expect.stringMatching(/frr-reload\.py --reload --daemon bgpd .*bgpd\.conf$/),
      expect.stringMatching(/-c clear bgp 10\.100\.2\.2$/),
    ]);
    expect(await step(driver, A)).toMatchObject({ changed: false, mutating: [] });

    const e = await step(driver, EMPTY);
    expect(e.changed).toBe(true);
    expect(procs.alive.size).toBe(0);
    await expect(e.commands).toMatchFileSnapshot("./golden/sequence-3-empty.txt");
    expect(await step(driver, EMPTY)).toMatchObject({ changed: false, mutating: [] });
  });

  it("restarts both daemons from the files when zebra died", async () => {
    const driver = new BgpDriver();
    await step(driver, A);
    procs.crash("zebra");
    const again = await step(driver, A);
    expect(again.mutating.map((c) => c.split(" ")[0])).toEqual(["kill", "install", "/usr/lib/frr/zebra", "/usr/lib/frr/bgpd"]);
    expect(procs.pids("bgpd")).toHaveLength(1);
  });

  it("reports a frr-reload failure with a machine code", async () => {
    const driver = new BgpDriver();
    await step(driver, A);
    fake.on(/frr-reload\.py --reload/, { exitCode: 1, stderr: "vtysh failed to process new configuration: % Unknown command" });
    await expect(driver.apply(B, ctx)).rejects.toMatchObject({
      code: "DAEMON_FAILED",
      message: expect.stringMatching(/Unknown command/),
    });
  });
});

describe("bgp daemons that cannot reach their directory", () => {
  it("says which directory FRR's user cannot search when zebra does not come up", async () => {
    const dir = await tempDirs("bgp-closed");
    try {
      // A state dir like mkdtemp's (0700): frr, which zebra drops to, cannot get through it.
      const closed = join(dir.root, "private");
      await mkdir(closed, { mode: 0o700 });
      const fake = new FakeRunner();
      new FakeProcesses(fake); // ps answers "no such process": zebra never appears
      const driver = new BgpDriver({ readyTimeoutMs: 200 });
      await expect(driver.apply(A, driverContext(fake, join(closed, "run")))).rejects.toMatchObject({
        code: "DAEMON_FAILED",
        message: expect.stringContaining(`cannot reach ${join(closed, "run", "bgp")}: ${closed} is not searchable by others`),
      });
    } finally {
      await dir.remove();
    }
  });
});

describe("bgp in system mode (fake runner)", () => {
  it("enables bgpd, starts or reloads frr.service, stops it on teardown", async () => {
    const dir = await tempDirs("bgp-sys");
    try {
      const fake = new FakeRunner();
      let active = true;
      fake.on(/^systemctl is-active --quiet frr$/, () => ({ exitCode: active ? 0 : 3 }));
      fake.on(/^systemctl stop frr$/, () => {
        active = false;
        return {};
      });
      const root = join(dir.root, "root");
      await mkdir(join(root, "etc/frr"), { recursive: true });
      await writeFile(join(root, "etc/frr/daemons"), "zebra=yes\nbgpd=no\n");
      const ctx = driverContext(fake, join(dir.root, "run"), { mode: "system" });
      const driver = new BgpDriver({ sysRoot: root });
      const run = async (c: DeviceConfig) => {
        fake.clear();
        await driver.apply(c, ctx);
        return mutatingCommands(fake.calls);
      };
      expect(await run(A)).toEqual(["systemctl restart frr"]);
      expect(await readFile(join(root, "etc/frr/daemons"), "utf8")).toBe("zebra=yes\nbgpd=yes\n");
      expect(await readFile(join(root, "etc/frr/frr.conf"), "utf8")).toMatch(/service integrated-vtysh-config/);
      expect(await run(A)).toEqual([]);
      expect(await run(B)).toEqual(["systemctl reload frr", "vtysh -c clear bgp 10.100.2.2"]);
      expect(await run(EMPTY)).toEqual(["systemctl stop frr"]);
      expect(await run(EMPTY)).toEqual([]);
    } finally {
      await dir.remove();
    }
  });
});
