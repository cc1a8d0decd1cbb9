/**
 * Config sequences (A → B → A → A → empty → empty) against a fake runner
 * with a fake kernel, process table and swanctl: the recorded commands are
 * compared with golden text, and repeats must record no mutating command.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConfigTunnel, DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ikev2Driver } from "../../src/drivers/ikev2/index.ts";
import { configWith, fullConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { FakeKernel } from "../support/fake-kernel.ts";
import { argAfter, FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { mutatingCommands } from "../support/mutating.ts";

interface World {
  fake: FakeRunner;
  kernel: FakeKernel;
  procs: FakeProcesses;
  ctx: TestContext;
  loaded: string[];
  dir: TempDirs;
}

/** A fake system with wan0/wan1 addressed, charon startable and swanctl answering. */
async function world(mode: "standalone" | "system" = "standalone"): Promise<World> {
  const dir = await tempDirs("ike-seq");
  const fake = new FakeRunner();
  const kernel = new FakeKernel(fake, ["wan0", "wan1", "lan0"]);
  kernel.addAddress("wan0", "10.100.1.2/24");
  kernel.addAddress("wan1", "10.101.1.2/24");
  kernel.addAddress("lan0", "192.168.50.2/24");
  const procs = new FakeProcesses(fake);
  const w: World = { fake, kernel, procs, ctx: driverContext(fake, join(dir.root, "run"), { mode }), loaded: [], dir };
  procs.daemon(/^start-stop-daemon --start .*charon-systemd/, "charon-systemd", (a) => argAfter(a, "--pidfile"), {
    start: () => kernel.addLink("ipsec0"),
    exit: () => {
      kernel.removeLink("ipsec0");
      w.loaded = [];
    },
  });
  fake.on(/^swanctl --load-all/, async (a) => {
    const confs = join(a[a.indexOf("--file") + 1] ?? "", "..", mode === "standalone" ? "conns" : "conf.d");
    w.loaded = (await readdir(confs).catch(() => [] as string[])).filter((n) => n.startsWith("tern-")).map((n) => n.slice(0, -5));
    return {};
  });
  fake.on(/^swanctl --list-conns --pretty/, () => ({
    stdout: w.loaded.map((n) => `list-conn event {\n  ${n} {\n    version = IKEv2\n  }\n}\n`).join(""),
  }));
  let active = false;
  fake.on(/^systemctl is-active --quiet strongswan$/, () => ({ exitCode: active ? 0 : 3 }));
  fake.on(/^systemctl (start|restart) strongswan$/, () => {
    active = true;
    kernel.addLink("ipsec0");
    return {};
  });
  fake.on(/^systemctl stop strongswan$/, () => {
    active = false;
    kernel.removeLink("ipsec0");
    return {};
  });
  return w;
}

function lines(w: World): string {
  return `${w.fake
    .lines()
    .map((l) => l.replaceAll(w.dir.root, "<tmp>"))
    .join("\n")}\n`;
}

async function step(
  w: World,
  driver: Ikev2Driver,
  config: DeviceConfig,
): Promise<{ changed: boolean; commands: string; mutating: string[] }> {
  w.fake.clear();
  const { changed } = await driver.apply(config, w.ctx);
  return { changed, commands: lines(w), mutating: mutatingCommands(w.fake.calls) };
}

const full = fullConfig();
const A = configWith({ tunnels: full.tunnels });
/** B: the peer connection removed, the device tunnel's phase-2 lifetime changed. */
const B = configWith({
  tunnels: [
    { ...(full.tunnels[0] as ConfigTunnel), esp: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 1800, pfs: true } },
  ],
});
const EMPTY = configWith({});

describe("ikev2 config sequence (fake runner)", () => {
  let w: World;
  beforeEach(async () => {
    w = await world();
  });
  afterEach(async () => {
    await w.dir.remove();
  });

  it("A → B → A → A → empty → empty", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const a1 = await step(w, driver, A);
    expect(a1.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toHaveLength(1);
    expect(w.loaded).toEqual(["tern-device-1", "tern-peer-2"]);
    await expect(a1.commands).toMatchFileSnapshot("./golden/sequence-1-A.txt");

    const b = await step(w, driver, B);
    expect(b.changed).toBe(true);
    expect(w.loaded).toEqual(["tern-device-1"]);
    expect(w.kernel.routes.map((r) => r.dst)).toEqual(["10.100.0.5/32", "10.60.0.0/24"]);
    await expect(b.commands).toMatchFileSnapshot("./golden/sequence-2-B.txt");

    const a2 = await step(w, driver, A);
    expect(a2.mutating).toEqual(expect.arrayContaining([expect.stringMatching(/^swanctl --load-all/)]));
    expect(a2.mutating.some((c) => c.startsWith("start-stop-daemon"))).toBe(false);

    const a3 = await step(w, driver, A);
    expect(a3).toMatchObject({ changed: false, mutating: [] });

    const e1 = await step(w, driver, EMPTY);
    expect(e1.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toEqual([]);
    expect(w.kernel.routes).toEqual([]);
    expect(w.kernel.link("lo")?.addresses).toEqual([]);
    await expect(readdir(join(w.ctx.runDir, "ikev2"))).rejects.toThrow();
    await expect(e1.commands).toMatchFileSnapshot("./golden/sequence-3-empty.txt");

    const e2 = await step(w, driver, EMPTY);
    expect(e2).toMatchObject({ changed: false, mutating: [] });
  });

  it("restarts a crashed charon and puts back its routes", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    await step(w, driver, A);
    w.procs.crash("charon-systemd");
    expect(w.kernel.routes).toEqual([]);
    const again = await step(w, driver, A);
    expect(again.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toHaveLength(1);
    expect(w.kernel.routes).toHaveLength(4);
  });

  it("a responder ends the SA of a changed connection so the initiator comes back with the new settings", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const responder = (life: number) =>
      configWith({
        tunnels: [
          {
            ...(full.tunnels[0] as ConfigTunnel),
            initiator: false,
            esp: { proposal: "aes256-sha256", lifetimeSeconds: life, pfs: true },
          },
        ],
      });
    await step(w, driver, responder(3600));
    const changed = await step(w, driver, responder(1800));
    // Load first, then end the SA: the initiator comes back at once and must meet the new selectors, not the old ones.
    expect(changed.mutating).toEqual([
      expect.stringMatching(/^swanctl --load-all/),
      expect.stringMatching(/^swanctl --terminate --ike tern-device-1 --force/),
    ]);
    const initiator = await step(
      w,
      driver,
      configWith({
        tunnels: [{ ...(full.tunnels[0] as ConfigTunnel), esp: { proposal: "aes256-sha256", lifetimeSeconds: 900, pfs: true } }],
      }),
    );
    // charon replaces the SAs of a start_action=start connection itself.
    expect(initiator.mutating.some((c) => c.includes("--terminate"))).toBe(false);
  });

  it("initiates again an initiator tunnel charon gave up on, not a responder, not one negotiating, at most every 10 s", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const responder = { ...(full.tunnels[1] as ConfigTunnel), initiator: false };
    const config = configWith({ tunnels: [full.tunnels[0] as ConfigTunnel, responder] });
    await step(w, driver, config);
    let sas = "";
    w.fake.on(/^swanctl --list-sas --pretty/, () => ({ stdout: sas }));
    w.fake.on(/^swanctl --initiate/, () => ({ exitCode: 1 }));
    const initiated = () => w.fake.lines().filter((l) => l.startsWith("swanctl --initiate"));

    // No SA at all (the peer answered NO_PROPOSAL_CHOSEN): the initiator tunnel only, without waiting for the result.
    w.fake.clear();
    expect(await driver.heal(config, w.ctx)).toEqual(["tern-device-1"]);
    expect(initiated()).toEqual([expect.stringMatching(/^swanctl --initiate --child tern-device-1 --timeout 1 --uri unix:/)]);
    // Not again within REINITIATE_EVERY_MS.
    w.fake.clear();
    expect(await driver.heal(config, w.ctx)).toEqual([]);
    expect(initiated()).toEqual([]);
    // Negotiating (charon retransmits by itself): nothing to do, whenever asked.
    sas = "list-sa event {\n  tern-device-1 {\n    state = CONNECTING\n    initiator = yes\n  }\n}\n";
    const later = new Ikev2Driver({ dataplane: "libipsec" });
    await step(w, later, config);
    w.fake.clear();
    expect(await later.heal(config, w.ctx)).toEqual([]);
    expect(initiated()).toEqual([]);
  });

  it("reacts to the kernel's WAN events: an address change on a tunnel's WAN asks for a reconcile, carrier back initiates at once", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const tunnel = full.tunnels[0] as ConfigTunnel;
    const config = configWith({ tunnels: [tunnel] });
    await step(w, driver, config);
    const reasons: string[] = [];
    const ctx = { ...w.ctx, requestReconcile: (r: string) => void reasons.push(r) };
    const wan = tunnel.localInterface;
    const at = (ifname: string, carrier: boolean, address: string | null) => ({ ifname, carrier, address });
    const change = (ifname: string, before: ReturnType<typeof at>, after: ReturnType<typeof at>) => ({
      ifname,
      before,
      after,
      seenAt: 0,
    });

    await driver.wanChanged([change(wan, at(wan, true, "10.100.1.2"), at(wan, true, "10.100.1.9"))], config, ctx);
    expect(reasons).toEqual([`${wan} address 10.100.1.2 → 10.100.1.9: tunnels re-keyed from the new address`]);
    await driver.wanChanged([change(wan, at(wan, true, "10.100.1.9"), at(wan, true, null))], config, ctx);
    expect(reasons[1]).toBe(`${wan} address 10.100.1.9 removed: tunnels re-keyed from the new address`);
    // A WAN no tunnel names, or a carrier loss alone: nothing to re-key.
    await driver.wanChanged([change("lan0", at("lan0", true, "1.2.3.4"), at("lan0", true, "1.2.3.5"))], config, ctx);
    await driver.wanChanged([change(wan, at(wan, true, "10.100.1.2"), at(wan, false, "10.100.1.2"))], config, ctx);
    expect(reasons).toHaveLength(2);

    // Carrier back with no IKE SA: initiated now, even right after heal() did (its 10 s pace is not waited for).
    w.fake.on(/^swanctl --list-sas --pretty/, () => ({ stdout: "" }));
    w.fake.on(/^swanctl --initiate/, () => ({ exitCode: 0 }));
    const initiated = () => w.fake.lines().filter((l) => l.startsWith("swanctl --initiate"));
    expect(await driver.heal(config, w.ctx)).toEqual(["tern-device-1"]);
    w.fake.clear();
    await driver.wanChanged([change(wan, at(wan, false, "10.100.1.2"), at(wan, true, "10.100.1.2"))], config, ctx);
    expect(initiated()).toEqual([expect.stringMatching(/^swanctl --initiate --child tern-device-1 --timeout 1 /)]);
  });

  it("a peer connection follows its WAN's failover: carrier lost → loaded from the other WAN's address, carrier back → its own again", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const config = configWith({ tunnels: full.tunnels, interfaces: full.interfaces });
    for (const n of ["wan0", "wan1"]) w.kernel.link(n)!.up = true;
    w.fake.on(/^swanctl --list-sas --pretty/, () => ({ stdout: "" }));
    const reasons: string[] = [];
    const ctx = { ...w.ctx, requestReconcile: (r: string) => void reasons.push(r) };
    const conf = async (name: string) =>
      readFile(join(w.ctx.runDir, "ikev2", "conns", `${name}.conf`), "utf8").then((s) => /local_addrs = (\S+)/.exec(s)?.[1]);
    await driver.apply(config, ctx);
    expect([await conf("tern-device-1"), await conf("tern-peer-2")]).toEqual(["10.100.1.2", "10.101.1.2"]);
    const at = (ifname: string, carrier: boolean) => ({
      ifname,
      carrier,
      address: ifname === "wan0" ? "10.100.1.2" : "10.101.1.2",
    });
    const change = (ifname: string, carrier: boolean) => ({
      ifname,
      before: at(ifname, !carrier),
      after: at(ifname, carrier),
      seenAt: 0,
    });

    // wan0 (no peer connection on it, none would move there while wan1 is up) lost: nothing to do.
    w.kernel.link("wan0")!.up = false;
    await driver.wanChanged([change("wan0", false)], config, ctx);
    expect(reasons).toEqual([]);
    w.kernel.link("wan0")!.up = true;
    await driver.wanChanged([change("wan0", true)], config, ctx);

    w.kernel.link("wan1")!.up = false;
    await driver.wanChanged([change("wan1", false)], config, ctx);
    expect(reasons).toEqual(["wan1 carrier lost: peer connections follow the WAN failover"]);
    w.fake.clear();
    await driver.apply(config, ctx);
    // The peer connection leaves from wan0's own address; the device tunnel stays on its WAN.
    expect([await conf("tern-device-1"), await conf("tern-peer-2")]).toEqual(["10.100.1.2", "10.100.1.2"]);
    // Its old SA is ended before the load, and the new one initiated after it (INITIAL_CONTACT: the peer drops the old one).
    const swanctl = w.fake
      .lines()
      .filter(
        (l) => l.startsWith("swanctl --terminate") || l.startsWith("swanctl --load-all") || l.startsWith("swanctl --initiate"),
      )
      .map((l) => l.split(" ").slice(0, 4).join(" "));
    expect(swanctl).toEqual([
      "swanctl --terminate --ike tern-peer-2",
      "swanctl --load-all --noprompt --file",
      "swanctl --initiate --child tern-peer-2",
    ]);
    expect(w.ctx.logs.join("\n")).toMatch(/wan1 is down, peer connection \S+ leaves from wan0 \(10\.100\.1\.2\)/);

    w.kernel.link("wan1")!.up = true;
    await driver.wanChanged([change("wan1", true)], config, ctx);
    expect(reasons[1]).toBe("wan1 carrier up: peer connections follow the WAN failover");
    await driver.apply(config, ctx);
    expect(await conf("tern-peer-2")).toBe("10.101.1.2");
  });

  it("detects XFRM interfaces when the kernel has them and uses them", async () => {
    w.kernel.xfrm = true;
    const driver = new Ikev2Driver();
    const a = await step(w, driver, A);
    expect(w.ctx.logs.join("\n")).toMatch(/dataplane XFRM interfaces/);
    expect(a.commands).toMatch(/^ip link add tern-xprobe type xfrm if_id 4242$/m);
    expect(a.commands).toMatch(/^ip link add xfrm-d1 type xfrm dev wan0 if_id 2$/m);
    expect(w.kernel.routes.map((r) => `${r.dst} ${r.dev}`)).toEqual(["10.60.0.0/24 xfrm-d1", "192.168.90.0/24 xfrm-p2"]);
    const again = await step(w, driver, A);
    expect(again).toMatchObject({ changed: false, mutating: [] });
    // A restarted agent does not probe again: it reads what it found.
    const restarted = new Ikev2Driver();
    const r = await step(w, restarted, A);
    expect(r.mutating).toEqual([]);
    expect(w.ctx.logs.at(-1)).toMatch(/probed earlier/);
  });

  it("falls back to kernel-libipsec and logs why", async () => {
    const driver = new Ikev2Driver();
    await step(w, driver, A);
    expect(w.ctx.logs.join("\n")).toMatch(/dataplane kernel-libipsec .*Unknown device type/);
    expect(w.kernel.link("ipsec0")).toBeDefined();
  });

  it("a bad config changes nothing", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const bad = configWith({
      tunnels: [{ ...(full.tunnels[0] as ConfigTunnel), auth: { psk: "", localId: "a", remoteId: "b" } }],
    });
    await expect(driver.apply(bad, w.ctx)).rejects.toMatchObject({ code: "INVALID_CONFIG", path: "tunnels.0.auth.psk" });
    expect(w.fake.calls).toEqual([]);
  });
});

describe("ikev2 in system mode (fake runner)", () => {
  it("writes /etc files, starts strongswan.service, loads, and tears down", async () => {
    const w = await world("system");
    try {
      const driver = new Ikev2Driver({ dataplane: "libipsec", sysRoot: join(w.dir.root, "root") });
      const a = await step(w, driver, A);
      await expect(a.commands).toMatchFileSnapshot("./golden/system-1-A.txt");
      expect(await readdir(join(w.dir.root, "root/etc/swanctl/conf.d"))).toEqual(["tern-device-1.conf", "tern-peer-2.conf"]);
      expect(await step(w, driver, A)).toMatchObject({ changed: false, mutating: [] });
      const e = await step(w, driver, EMPTY);
      expect(e.mutating).toContain("systemctl stop strongswan");
      expect(await readdir(join(w.dir.root, "root/etc/swanctl/conf.d"))).toEqual([]);
    } finally {
      await w.dir.remove();
    }
  });
});
