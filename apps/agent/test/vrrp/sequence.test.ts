/** VRRP config sequences against a fake runner and process table: reload only on change, teardown stops keepalived. */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VrrpDriver } from "../../src/drivers/vrrp/index.ts";
import { configWith, fullConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { argAfter, FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { mutatingCommands } from "../support/mutating.ts";

const sample = fullConfig().vrrp;
const A = configWith({ vrrp: sample });
const B = configWith({ vrrp: [{ ...sample[0]!, priority: 90, trackOptional: ["wan1"] }] });
const EMPTY = configWith({});

describe("vrrp config sequence (fake runner)", () => {
  let dir: TempDirs;
  let fake: FakeRunner;
  let procs: FakeProcesses;
  let ctx: TestContext;
  let driver: VrrpDriver;
  beforeEach(async () => {
    dir = await tempDirs("vrrp-seq");
    fake = new FakeRunner();
    procs = new FakeProcesses(fake);
    procs.daemon(/^start-stop-daemon --start .*keepalived/, "keepalived", (a) => argAfter(a, "--pidfile"));
    ctx = driverContext(fake, join(dir.root, "run"));
    driver = new VrrpDriver();
  });
  afterEach(async () => {
    driver.close();
    await dir.remove();
  });

  const step = async (config: DeviceConfig) => {
    fake.clear();
    const { changed } = await driver.apply(config, ctx);
    return { changed, mutating: mutatingCommands(fake.calls).map((l) => l.replaceAll(dir.root, "<tmp>")) };
  };

  it("A → B → A → A → empty → empty", async () => {
    const a = await step(A);
    expect(a.mutating).toEqual([
      expect.stringMatching(/^start-stop-daemon --start .*keepalived .* -f <tmp>\/run\/vrrp\/keepalived\.conf/),
    ]);
    const pid = procs.pids("keepalived")[0];
    const b = await step(B);
    expect(b.mutating).toEqual([`kill -s HUP ${pid}`]);
    expect(await readFile(join(ctx.runDir, "vrrp/keepalived.conf"), "utf8")).toMatch(/priority 90/);
    expect((await step(A)).mutating).toEqual([`kill -s HUP ${pid}`]);
    expect(await step(A)).toEqual({ changed: false, mutating: [] });
    const e = await step(EMPTY);
    expect(e.mutating).toEqual([`kill -s TERM ${pid}`]);
    expect(procs.alive.size).toBe(0);
    await expect(readdir(join(ctx.runDir, "vrrp"))).rejects.toThrow();
    expect(await step(EMPTY)).toEqual({ changed: false, mutating: [] });
  });

  it("reports transitions the notify script records through ctx.notify()", async () => {
    await step(A);
    const id = sample[0]!.groupId;
    await writeFile(join(ctx.runDir, "vrrp/transitions.log"), `1795303830.158 tern-${id} MASTER 150\n`, { flag: "a" });
    await expect.poll(() => ctx.notes.map((n) => n.reason)).toEqual([`vrrp ${id} MASTER`]);
    expect((await driver.observe(A, ctx)).vrrp).toEqual([{ groupId: id, state: "MASTER", since: "2026-11-21T23:30:30.158Z" }]);
  });

  it("starts a new keepalived with a clean transitions file after it died", async () => {
    await step(A);
    await writeFile(join(ctx.runDir, "vrrp/transitions.log"), `1.0 tern-${sample[0]!.groupId} MASTER 150\n`);
    procs.crash("keepalived");
    expect((await driver.observe(A, ctx)).vrrp?.[0]?.state).toBe("unknown");
    const again = await step(A);
    expect(again.mutating[0]).toMatch(/^start-stop-daemon/);
    expect(await readFile(join(ctx.runDir, "vrrp/transitions.log"), "utf8")).toBe("");
    expect((await driver.observe(A, ctx)).vrrp?.[0]?.state).toBe("INIT");
  });
});

describe("vrrp in system mode (fake runner)", () => {
  it("uses keepalived.service: start, reload on change, stop on teardown", async () => {
    const dir = await tempDirs("vrrp-sys");
    const driver = new VrrpDriver({ sysRoot: join(dir.root, "root") });
    try {
      const fake = new FakeRunner();
      let active = false;
      fake.on(/^systemctl is-active --quiet keepalived$/, () => ({ exitCode: active ? 0 : 3 }));
      fake.on(/^systemctl (start|stop) keepalived$/, (a) => {
        active = a[1] === "start";
        return {};
      });
      await mkdir(join(dir.root, "root/etc/keepalived"), { recursive: true });
      const ctx = driverContext(fake, join(dir.root, "run"), { mode: "system" });
      const run = async (c: DeviceConfig) => {
        fake.clear();
        await driver.apply(c, ctx);
        return mutatingCommands(fake.calls);
      };
      expect(await run(A)).toEqual(["systemctl start keepalived"]);
      const conf = await readFile(join(dir.root, "root/etc/keepalived/keepalived.conf"), "utf8");
      expect(conf).toContain(`vrrp_notify_fifo_script ${join(dir.root, "root/etc/keepalived/tern-notify.sh")}\n`);
      expect(conf).toContain(`vrrp_notify_fifo ${join(ctx.runDir, "vrrp/notify.fifo")}\n`);
      expect(await run(A)).toEqual([]);
      expect(await run(B)).toEqual(["systemctl reload keepalived"]);
      expect(await run(EMPTY)).toEqual(["systemctl stop keepalived"]);
      expect(await readdir(join(dir.root, "root/etc/keepalived"))).toEqual([]);
    } finally {
      driver.close();
      await dir.remove();
    }
  });
});
