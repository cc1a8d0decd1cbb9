/**
 * VRRP driver against real keepalived in throw-away namespaces: two routers
 * on one LAN (a bridge in a third namespace), adverts every 100 ms. Master
 * election, tracked-interface failover, graceful and hard failover, each
 * seen through ctx.notify() as it happens.
 */
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled, run } from "@tern/netlab";
import type { ConfigVrrp } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VrrpDriver } from "../../src/drivers/vrrp/index.ts";
import { configWith } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { mutatingCommands } from "../support/mutating.ts";
import { NetnsRunner } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("vrrp driver (keepalived)", ["keepalived", "start-stop-daemon"]);

const group = (priority: number): ConfigVrrp => ({
  groupId: "g1",
  virtualRouterId: 51,
  interface: "lan0",
  virtualIp: "192.168.70.1",
  prefix: 24,
  priority,
  preemption: true,
  acceptMode: false,
  advertIntervalMs: 100,
  trackOptional: [],
  trackMandatory: ["wan0"],
});

/** Waits for a notify() naming `state` after `since`; returns when it came. */
async function notified(ctx: TestContext, state: string, since: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const note = ctx.notes.find((n) => n.at >= since && n.reason === `vrrp g1 ${state}`);
    if (note) return note.at;
    if (Date.now() > deadline)
      throw new Error(`no "vrrp g1 ${state}" notification; got ${JSON.stringify(ctx.notes.map((n) => n.reason))}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.runIf(enabled)("vrrp driver with real keepalived in namespaces", () => {
  const scope = new NetnsScope("vrrp");
  let dir: TempDirs;
  let vr1: Netns;
  let vr2: Netns;
  let ctx1: TestContext;
  let ctx2: TestContext;
  const d1 = new VrrpDriver();
  const d2 = new VrrpDriver();
  const c1 = configWith({ vrrp: [group(150)] });
  const c2 = configWith({ vrrp: [group(100)] });
  const hasVip = async (ns: Netns) =>
    /192\.168\.70\.1\/24/.test((await ns.exec(["ip", "-4", "addr", "show", "dev", "lan0"])).stdout);

  beforeAll(async () => {
    dir = await tempDirs("vrrp");
    const sw = await scope.netns("sw");
    vr1 = await scope.netns("vr1");
    vr2 = await scope.netns("vr2");
    await sw.exec(["ip", "link", "add", "br0", "type", "bridge"]);
    await sw.up("br0");
    for (const [ns, n] of [
      [vr1, 1],
      [vr2, 2],
    ] as const) {
      await scope.veth(ns, "lan0", sw, `p${n}`);
      await sw.exec(["ip", "link", "set", `p${n}`, "master", "br0"]);
      await scope.veth(ns, "wan0", sw, `w${n}`);
      await ns.addAddress("lan0", `192.168.70.${n + 1}/24`);
    }
    ctx1 = driverContext(new NetnsRunner(vr1.name), join(dir.root, "vr1"));
    ctx2 = driverContext(new NetnsRunner(vr2.name), join(dir.root, "vr2"));
  }, 30_000);

  afterAll(async () => {
    d1.close();
    d2.close();
    await d1.apply(configWith({}), ctx1).catch(() => {});
    await d2.apply(configWith({}), ctx2).catch(() => {});
    await scope.cleanup();
    await dir?.remove();
  }, 30_000);

  it("elects the higher priority as master and reports it through notify()", async () => {
    const t0 = Date.now();
    await d2.apply(c2, ctx2);
    await d1.apply(c1, ctx1);
    const at = await notified(ctx1, "MASTER", t0);
    await notified(ctx2, "BACKUP", t0);
    console.log(`vrrp: master elected ${at - t0} ms after apply (advert 100 ms)`);
    expect(await hasVip(vr1)).toBe(true);
    expect(await hasVip(vr2)).toBe(false);
    expect((await d1.observe(c1, ctx1)).vrrp).toEqual([{ groupId: "g1", state: "MASTER", since: expect.any(String) }]);
    expect((await d2.observe(c2, ctx2)).vrrp?.[0]?.state).toBe("BACKUP");
  }, 20_000);

  it("re-applying the same config runs no mutating command and keeps the state", async () => {
    const r = ctx1.runner as NetnsRunner;
    r.clear();
    expect((await d1.apply(c1, ctx1)).changed).toBe(false);
    expect(mutatingCommands(r.calls)).toEqual([]);
    expect((await d1.observe(c1, ctx1)).vrrp?.[0]?.state).toBe("MASTER");
  });

  it("a mandatory tracked interface going down hands over (FAULT), and preemption takes it back", async () => {
    const t0 = Date.now();
    await vr1.exec(["ip", "link", "set", "wan0", "down"]);
    await notified(ctx1, "FAULT", t0);
    const at = await notified(ctx2, "MASTER", t0);
    console.log(`vrrp: tracked interface down → peer master in ${at - t0} ms`);
    expect(await hasVip(vr2)).toBe(true);
    const t1 = Date.now();
    await vr1.exec(["ip", "link", "set", "wan0", "up"]);
    await notified(ctx1, "MASTER", t1);
    await notified(ctx2, "BACKUP", t1);
  }, 20_000);

  it("fails over when the master's keepalived stops gracefully (empty section)", async () => {
    const t0 = Date.now();
    await d1.apply(configWith({}), ctx1);
    const at = await notified(ctx2, "MASTER", t0);
    console.log(`vrrp: graceful stop → backup master in ${at - t0} ms`);
    expect(await hasVip(vr1)).toBe(false);
    expect(await hasVip(vr2)).toBe(true);
    expect((await run(["ip", "netns", "pids", vr1.name])).stdout.trim()).toBe("");
  }, 20_000);

  it("fails over when the master's keepalived is killed", async () => {
    const t0 = Date.now();
    await d1.apply(c1, ctx1);
    await notified(ctx1, "MASTER", t0);
    await notified(ctx2, "BACKUP", t0);
    const pids = (await run(["ip", "netns", "pids", vr1.name])).stdout.trim().split(/\s+/);
    expect(pids.length).toBeGreaterThan(0);
    // Freeze first: a SIGKILLed parent makes its VRRP child stop gracefully (priority-0 advert), which is not a hard failure.
    for (const pid of pids) process.kill(Number(pid), "SIGSTOP");
    const killed = Date.now();
    const at = await notified(ctx2, "MASTER", killed);
    for (const pid of pids) process.kill(Number(pid), "SIGKILL");
    console.log(`vrrp: hard failover (master frozen, then killed) ${at - killed} ms with 100 ms adverts`);
    expect((await d1.observe(c1, ctx1)).vrrp?.[0]?.state).toBe("unknown");
  }, 20_000);

  it("the next apply restarts a killed keepalived", async () => {
    const t0 = Date.now();
    expect((await d1.apply(c1, ctx1)).changed).toBe(true);
    await notified(ctx1, "MASTER", t0);
  }, 20_000);
});
