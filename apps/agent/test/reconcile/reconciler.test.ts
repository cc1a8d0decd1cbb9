import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { configHash, emptyDeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Driver } from "../../src/drivers/driver.ts";
import { LinksDriver } from "../../src/drivers/links/index.ts";
import { memoryLogger, silentLogger } from "../../src/log.ts";
import { agentPaths } from "../../src/paths.ts";
import { Reconciler, StateStore } from "../../src/reconcile/index.ts";
import { DEVICE_ID, iface, linksConfig, route } from "../support/configs.ts";
import { driverContext, type TempDirs, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";
import { deferred, TestDriver } from "../support/test-driver.ts";

const A = linksConfig([iface("lan0", { address: "192.168.50.1/24" })]);
const B = linksConfig([iface("lan0", { address: "192.168.60.1/24" })]);
const C = linksConfig([iface("lan0", { address: "192.168.70.1/24" })]);

describe("reconciler", () => {
  let dirs: TempDirs;
  beforeEach(async () => {
    dirs = await tempDirs("reconcile");
  });
  afterEach(() => dirs.remove());

  async function make(drivers: Driver[], runner = new FakeSystem(), log = silentLogger) {
    const paths = agentPaths(dirs.stateDir, dirs.runDir);
    const r = new Reconciler({ drivers, context: driverContext(runner, dirs), store: new StateStore(paths, log), log });
    await r.init();
    return { r, paths };
  }

  it("applies through every driver in order and persists the last good config atomically (0600)", async () => {
    const links = new TestDriver("links");
    const firewall = new TestDriver("firewall");
    const { r, paths } = await make([links, firewall]);
    const out = await r.submit(A, { source: "test" });
    expect(out).toMatchObject({ ok: true, hash: configHash(A), appliedHash: configHash(A), rolledBack: false });
    expect(out.drivers.map((d) => [d.driver, d.ok, d.changed])).toEqual([
      ["links", true, true],
      ["firewall", true, true],
    ]);
    const saved = JSON.parse(await readFile(paths.applied, "utf8"));
    expect(saved.hash).toBe(configHash(A));
    expect((await stat(paths.applied)).mode & 0o777).toBe(0o600);
    await expect(stat(paths.pending)).rejects.toThrow(/ENOENT/);
    // Same config again runs the drivers (drift repair) but nothing changes.
    expect((await r.submit(A, { source: "test" })).drivers.map((d) => d.changed)).toEqual([false, false]);
  });

  it("refuses invalid configs and hash mismatches with a code, touching nothing", async () => {
    const links = new TestDriver("links");
    const { r } = await make([links]);
    const bad = await r.submit({ ...A, interfaces: [{ ...A.interfaces[0], mtu: 100 }] }, { source: "test" });
    expect(bad).toMatchObject({ ok: false, code: "INVALID_CONFIG", hash: null, appliedHash: null });
    expect(bad.error).toMatch(/^INVALID_CONFIG: interfaces\.0\.mtu: /);
    const mismatch = await r.submit(A, { source: "test", expectedHash: "0".repeat(64) });
    expect(mismatch).toMatchObject({ ok: false, code: "HASH_MISMATCH" });
    expect(links.applied).toEqual([]);
  });

  it("rolls the drivers that ran back to the last good config and reports which driver failed and why", async () => {
    const links = new TestDriver("links");
    const firewall = new TestDriver("firewall");
    const ikev2 = new TestDriver("ikev2");
    const { r, paths } = await make([links, firewall, ikev2]);
    await r.submit(A, { source: "test" });
    firewall.failWhen = (c) => (configHash(c) === configHash(B) ? "nft: syntax error in table inet tern" : null);
    const out = await r.submit(B, { source: "test" });
    expect(out).toMatchObject({
      ok: false,
      rolledBack: true,
      hash: configHash(B),
      appliedHash: configHash(A),
      code: "DRIVER_FAILED",
    });
    expect(out.error).toBe("firewall failed: nft: syntax error in table inet tern");
    expect(out.drivers.map((d) => [d.driver, d.ok])).toEqual([
      ["links", true],
      ["firewall", false],
    ]);
    expect(out.rollback.map((d) => [d.driver, d.ok])).toEqual([
      ["links", true],
      ["firewall", true],
    ]);
    // ikev2 never saw B; every driver's system state is A again.
    expect(ikev2.applied).toEqual([configHash(A)]);
    expect([links.state, firewall.state, ikev2.state]).toEqual([configHash(A), configHash(A), configHash(A)]);
    expect(JSON.parse(await readFile(paths.applied, "utf8")).hash).toBe(configHash(A));
    expect(r.driverStates.get("firewall")).toMatchObject({ ok: true, hash: configHash(A) });
  });

  it("tears down to empty when the very first config fails, and says when the rollback fails too", async () => {
    const links = new TestDriver("links");
    const firewall = new TestDriver("firewall");
    const { r } = await make([links, firewall]);
    firewall.failWhen = () => "boom";
    const out = await r.submit(A, { source: "test" });
    expect(out).toMatchObject({ ok: false, rolledBack: true, appliedHash: null });
    expect(out.error).toBe("firewall failed: boom; rollback failed too: firewall: boom");
    expect(links.applied).toEqual([configHash(A), configHash(emptyDeviceConfig(DEVICE_ID))]);
  });

  it("is single-flight and latest-wins: configs queued behind a running apply collapse to the newest", async () => {
    const links = new TestDriver("links");
    const { r } = await make([links]);
    const gate = deferred();
    links.gate = gate.promise;
    const first = r.submit(A, { source: "1" });
    await expect.poll(() => links.applied.length).toBe(1);
    expect(r.applying).toBe(true);
    const second = r.submit(B, { source: "2" });
    const third = r.submit(C, { source: "3" });
    links.gate = null;
    gate.resolve();
    const [o1, o2, o3] = await Promise.all([first, second, third]);
    expect(o1).toMatchObject({ ok: true, hash: configHash(A) });
    expect(o2).toMatchObject({ ok: false, superseded: true, hash: configHash(C), appliedHash: configHash(C) });
    expect(o3).toMatchObject({ ok: true, hash: configHash(C) });
    // B never reached a driver.
    expect(links.applied).toEqual([configHash(A), configHash(C)]);
  });

  it("re-applies the current config when a driver asks, coalescing requests", async () => {
    const links = new TestDriver("links");
    const { r } = await make([links]);
    await r.submit(A, { source: "test" });
    r.requestReconcile("lease");
    r.requestReconcile("lease again");
    await r.idle();
    expect(links.applied).toEqual([configHash(A), configHash(A)]);
    expect(r.lastOutcome?.source).toBe("reapply: lease again");
  });

  it("restores the last good config at start and notes an interrupted apply", async () => {
    const links = new TestDriver("links");
    const { r, paths } = await make([links]);
    await r.submit(A, { source: "test" });
    await writeFile(
      paths.pending,
      JSON.stringify({ hash: configHash(B), startedAt: "2026-01-01T00:00:00Z", source: "x", pid: 1 }),
    );
    const log = memoryLogger();
    const again = await make([links], new FakeSystem(), log);
    expect(again.r.interrupted?.hash).toBe(configHash(B));
    expect(log.records.some((l) => l.msg.includes("interrupted"))).toBe(true);
    expect(await again.r.restore()).toMatchObject({ ok: true, source: "restore", appliedHash: configHash(A) });
    expect(again.r.interrupted).toBeNull();
    await expect(stat(paths.pending)).rejects.toThrow(/ENOENT/);
  });

  it("sets a damaged last good config aside instead of trusting it", async () => {
    const { paths } = await make([new TestDriver("links")]);
    await mkdir(dirs.stateDir, { recursive: true });
    await writeFile(paths.applied, JSON.stringify({ hash: "f".repeat(64), appliedAt: "x", config: A }));
    const log = memoryLogger();
    const { r } = await make([new TestDriver("links")], new FakeSystem(), log);
    expect(r.appliedHash).toBeNull();
    expect(log.records.find((l) => l.level === "error")?.fields?.problem).toMatch(/hash does not match/);
  });

  it("with the links driver: a failing route rolls addresses back on a fake system", async () => {
    const sys = new FakeSystem([{ name: "wan0" }]);
    const { r } = await make([new LinksDriver()], sys);
    const good = linksConfig([iface("wan0", { type: "WAN", address: "10.0.0.2/24", gateway: "10.0.0.1" })]);
    await r.submit(good, { source: "test" });
    // 10.9.9.1 is on no connected subnet: the route fails after the address changed.
    const bad = linksConfig([iface("wan0", { type: "WAN", address: "10.0.1.2/24" })], [route("172.16.0.0/16", "10.9.9.1")]);
    sys.takeMutating();
    const out = await r.submit(bad, { source: "test" });
    expect(out.error).toMatch(
      /^links failed: ip route add 172.16.0.0\/16 via 10.9.9.1 metric 0 proto 57: exit 2: Error: Nexthop has invalid gateway/,
    );
    expect(sys.kernel.link("wan0")?.addresses).toEqual(["10.0.0.2/24"]);
    // The default route is back in main, and in wan0's own table (source routing), above its blackhole.
    expect(sys.routes.map((x) => `${x.table} ${x.dst} ${x.type ?? `via ${x.gateway}`}`).sort()).toEqual([
      "29000 0.0.0.0/0 blackhole",
      "29000 0.0.0.0/0 via 10.0.0.1",
      "main 0.0.0.0/0 via 10.0.0.1",
    ]);
  });
});
