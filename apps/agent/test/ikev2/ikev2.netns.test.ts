/**
 * IKEv2 driver against real strongSwan in throw-away namespaces: two edges
 * (each its own charon-systemd, as two agents would run) and a stock charon
 * as a non-managed peer, behind a WAN router. Short lifetimes (20 s IKE, 8 s
 * ESP) so rekeys happen during the test.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Netns, NetnsScope, privilegedTestsEnabled, run } from "@tern/netlab";
import type { ConfigTunnel } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ikev2Driver } from "../../src/drivers/ikev2/index.ts";
import { configWith } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { mutatingCommands } from "../support/mutating.ts";
import { NetnsRunner } from "../support/netns-runner.ts";

const enabled = privilegedTestsEnabled("ikev2 driver (strongSwan)", ["charon-systemd", "swanctl", "start-stop-daemon", "ping"]);

const base = {
  ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 20 },
  esp: { proposal: "aes256-sha256", lifetimeSeconds: 8, pfs: true },
  dpdSeconds: 5,
  probeTargets: [],
  pathLabel: null,
};
const aToB: ConfigTunnel = {
  ...base,
  id: "tunnel-1",
  num: 1,
  kind: "device",
  localInterface: "wan0",
  localAddress: "10.100.1.2",
  remoteAddress: "10.100.2.2",
  localLoopback: "10.100.0.4",
  remoteLoopback: "10.100.0.5",
  auth: { psk: "generated-tunnel-secret-0001", localId: "tern-1-a", remoteId: "tern-1-b" },
  initiator: true,
  localSubnets: ["10.50.0.0/24"],
  remoteSubnets: ["10.60.0.0/24"],
};
const bToA: ConfigTunnel = {
  ...aToB,
  localAddress: "10.100.2.2",
  remoteAddress: "10.100.1.2",
  localLoopback: "10.100.0.5",
  remoteLoopback: "10.100.0.4",
  auth: { psk: aToB.auth.psk, localId: "tern-1-b", remoteId: "tern-1-a" },
  initiator: false,
  localSubnets: ["10.60.0.0/24"],
  remoteSubnets: ["10.50.0.0/24"],
};
/** A peer connection leaving from wan1 although the default route points at wan0. */
const aToPeer: ConfigTunnel = {
  ...base,
  esp: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 3600, pfs: true },
  ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 },
  id: "peer-2",
  num: 2,
  kind: "peer",
  localInterface: "wan1",
  localAddress: null,
  remoteAddress: "10.100.9.2",
  localLoopback: "10.100.0.6",
  remoteLoopback: "10.100.0.7",
  auth: { psk: "lab-psk-0123456789", localId: "10.101.1.2", remoteId: "10.100.9.2" },
  initiator: true,
  localSubnets: ["192.168.50.0/24"],
  remoteSubnets: ["192.168.90.0/24"],
};

async function ping(ns: Netns, target: string, count = 1): Promise<boolean> {
  const r = await ns.exec(["ping", "-n", "-q", "-c", String(count), "-W", "1", target], { allowFailure: true });
  return r.exitCode === 0;
}

describe.runIf(enabled)("ikev2 driver with real charon in namespaces", () => {
  const scope = new NetnsScope("ike");
  let dir: TempDirs;
  let nsA: Netns;
  let nsB: Netns;
  let nsP: Netns;
  const runA = () => new NetnsRunner(nsA.name);
  let ctxA: TestContext;
  let ctxB: TestContext;
  const driverA = new Ikev2Driver();
  const driverB = new Ikev2Driver();
  const configA = configWith({ tunnels: [aToB, aToPeer] });
  const configB = configWith({ tunnels: [bToA] });

  beforeAll(async () => {
    dir = await tempDirs("ike");
    const w = await scope.netns("w");
    nsA = await scope.netns("a");
    nsB = await scope.netns("b");
    nsP = await scope.netns("p");
    await scope.veth(nsA, "wan0", w, "toA");
    await scope.veth(nsA, "wan1", w, "toA1");
    await scope.veth(nsB, "wan0", w, "toB");
    await scope.veth(nsP, "wan0", w, "toP");
    for (const [ifname, cidr] of [
      ["toA", "10.100.1.1/24"],
      ["toA1", "10.101.1.1/24"],
      ["toB", "10.100.2.1/24"],
      ["toP", "10.100.9.1/24"],
    ] as const)
      await w.addAddress(ifname, cidr);
    await w.sysctl("net.ipv4.ip_forward", "1");
    await nsA.addAddress("wan0", "10.100.1.2/24");
    await nsA.addAddress("wan1", "10.101.1.2/24");
    await nsB.addAddress("wan0", "10.100.2.2/24");
    await nsP.addAddress("wan0", "10.100.9.2/24");
    await nsA.exec(["ip", "route", "add", "default", "via", "10.100.1.1"]);
    await nsB.exec(["ip", "route", "add", "default", "via", "10.100.2.1"]);
    await nsP.exec(["ip", "route", "add", "default", "via", "10.100.9.1"]);
    ctxA = driverContext(runA(), join(dir.root, "a"));
    ctxB = driverContext(new NetnsRunner(nsB.name), join(dir.root, "b"));
    await startStockPeer(scope, nsP, join(dir.root, "p"));
  }, 60_000);

  afterAll(async () => {
    if (!process.env.TERN_KEEP_TMP) {
      await driverA.apply(configWith({}), ctxA).catch(() => {});
      await driverB.apply(configWith({}), ctxB).catch(() => {});
    }
    await scope.cleanup();
    if (!process.env.TERN_KEEP_TMP) await dir?.remove();
    else console.log(`kept ${dir?.root}`);
  }, 60_000);

  it("detects that this kernel has no XFRM interfaces and uses kernel-libipsec", async () => {
    const dataplane = await driverA.detectDataplane(ctxA);
    const probe = await nsA.exec(["ip", "link", "add", "xprobe2", "type", "xfrm", "if_id", "9"], { allowFailure: true });
    await nsA.exec(["ip", "link", "del", "xprobe2"], { allowFailure: true });
    expect(dataplane).toBe(probe.exitCode === 0 ? "xfrm" : "libipsec");
    expect(ctxA.logs.join("\n")).toMatch(/ikev2: dataplane/);
  });

  it("brings the device tunnel up: SA established and the loopbacks ping each other", async () => {
    await driverB.apply(configB, ctxB);
    const t0 = performance.now();
    await driverA.apply(configA, ctxA);
    const applied = performance.now();
    let upAt = 0;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const state = (await driverA.saStates(configA, ctxA)).find((s) => s.id === "tunnel-1");
      if (state?.up) {
        upAt = performance.now();
        // IKEv2 never runs a key exchange for the CHILD_SA created with IKE_AUTH: PFS shows only on rekeys.
        expect(state.ikeSas[0]?.children[0]?.dhGroup).toBeNull();
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(upAt).toBeGreaterThan(0);
    let pingAt = 0;
    while (Date.now() < deadline) {
      if (await ping(nsA, "10.100.0.5")) {
        pingAt = performance.now();
        break;
      }
    }
    expect(pingAt).toBeGreaterThan(0);
    console.log(
      `ikev2: apply ${(applied - t0).toFixed(0)} ms (charon start + load), SA up ${(upAt - t0).toFixed(0)} ms, first tunnel ping ${(pingAt - t0).toFixed(0)} ms after apply started`,
    );
    // Routes are the agent's: through ipsec0, sourced from the tunnel loopback.
    const routes = JSON.parse((await nsA.exec(["ip", "-j", "route", "show", "proto", "58"])).stdout) as {
      dst: string;
      dev: string;
      prefsrc: string;
    }[];
    expect(routes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ dst: "10.100.0.5", dev: "ipsec0", prefsrc: "10.100.0.4" }),
        expect.objectContaining({ dst: "10.60.0.0/24", dev: "ipsec0", prefsrc: "10.100.0.4" }),
      ]),
    );
  }, 40_000);

  it("configures the lifetimes as given and uses PFS on rekeyed CHILD_SAs", async () => {
    const conns = await ctxA.runner.run(
      ["swanctl", "--list-conns", "--uri", `unix://${join(ctxA.runDir, "ikev2/charon.vici")}`],
      { env: { STRONGSWAN_CONF: join(ctxA.runDir, "ikev2/strongswan.conf") } },
    );
    expect(conns.stdout).toMatch(/tern-device-1: IKEv2, no reauthentication, rekeying every 20s/);
    expect(conns.stdout).toMatch(/tern-device-1: TUNNEL, rekeying every 8s/);
    // Keep traffic flowing over several rekeys and watch a CHILD_SA with a DH group appear.
    const pinger = nsA.exec(["ping", "-n", "-q", "-c", "120", "-i", "0.1", "10.100.0.5"], {
      allowFailure: true,
      timeoutMs: 40_000,
    });
    let pfsSeen: { dhGroup: string | null; rekeyIn: number | null; lifeIn: number | null } | null = null;
    let ikeRekeyIn: number | null = null;
    const deadline = Date.now() + 20_000;
    while (!pfsSeen && Date.now() < deadline) {
      const sa = (await driverA.saStates(configA, ctxA)).find((s) => s.id === "tunnel-1");
      for (const ike of sa?.ikeSas ?? []) {
        ikeRekeyIn = ike.rekeyIn ?? ikeRekeyIn;
        const child = ike.children.find((c) => c.state === "INSTALLED" && c.dhGroup !== null);
        if (child) pfsSeen = child;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(pfsSeen?.dhGroup).toBe("MODP_2048");
    expect(pfsSeen?.rekeyIn).toBeLessThanOrEqual(8);
    expect(pfsSeen?.lifeIn).toBeLessThanOrEqual(9);
    expect(ikeRekeyIn).toBeLessThanOrEqual(20);
    const out = (await pinger).stdout;
    const m = /(\d+) packets transmitted, (\d+) received/.exec(out);
    expect(m).not.toBeNull();
    const lost = Number(m?.[1]) - Number(m?.[2]);
    console.log(`ikev2: ${lost} of ${m?.[1]} pings lost across CHILD_SA rekeys every 8 s`);
    expect(lost).toBeLessThanOrEqual(3);
  }, 60_000);

  it("brings the peer connection up from wan1's own address to a stock charon", async () => {
    await expect
      .poll(async () => (await driverA.saStates(configA, ctxA)).find((s) => s.id === "peer-2")?.up, { timeout: 20_000 })
      .toBe(true);
    const peerSas = await nsP.exec(["swanctl", "--list-sas", "--uri", `unix://${join(dir.root, "p/charon.vici")}`], {
      allowFailure: true,
    });
    expect(peerSas.stdout).toMatch(/remote '10\.101\.1\.2' @ 10\.101\.1\.2\[/);
    expect(await ping(nsA, "192.168.90.1", 2)).toBe(true);
  }, 30_000);

  it("re-applying the same config runs no mutating command", async () => {
    const runner = ctxA.runner as NetnsRunner;
    runner.clear();
    const outcome = await driverA.apply(configA, ctxA);
    expect(mutatingCommands(runner.calls)).toEqual([]);
    expect(outcome.changed).toBe(false);
  });

  it("an empty section stops charon and removes routes, loopbacks and files", async () => {
    await driverA.apply(configWith({}), ctxA);
    const lo = (await nsA.exec(["ip", "-4", "addr", "show", "dev", "lo"])).stdout;
    expect(lo).not.toMatch(/10\.100\.0\.4/);
    expect((await nsA.exec(["ip", "route", "show", "proto", "58"])).stdout.trim()).toBe("");
    expect((await nsA.exec(["ip", "link", "show", "ipsec0"], { allowFailure: true })).exitCode).not.toBe(0);
    const pids = (await run(["ip", "netns", "pids", nsA.name])).stdout.trim();
    expect(pids).toBe("");
    const again = new NetnsRunner(nsA.name);
    const second = await driverA.apply(configWith({}), { ...ctxA, runner: again });
    expect(second.changed).toBe(false);
    expect(mutatingCommands(again.calls)).toEqual([]);
  }, 30_000);
});

/** A non-managed peer: charon-systemd with a hand-written swanctl.conf, as an admin would run it. */
async function startStockPeer(scope: NetnsScope, ns: Netns, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const conf = join(dir, "strongswan.conf");
  const vici = join(dir, "charon.vici");
  await writeFile(
    conf,
    `charon-systemd {
  load_modular = no
  load = random nonce openssl pem pkcs1 pubkey x509 revocation constraints hmac sha1 sha2 aes kdf kernel-libipsec kernel-netlink socket-default vici
  install_routes = no
  filelog { peer { path = ${dir}/charon.log
    default = 1 } }
  plugins {
    vici { socket = unix://${vici} }
    kernel-netlink { fwmark = 0x4242 }
  }
}
swanctl { load = random openssl pem pkcs1 pubkey x509 revocation constraints }
`,
  );
  await writeFile(
    join(dir, "swanctl.conf"),
    `connections {
  edge {
    version = 2
    local_addrs = 10.100.9.2
    proposals = aes256-sha256-modp2048
    local { auth = psk
      id = 10.100.9.2 }
    remote { auth = psk
      id = 10.101.1.2 }
    children {
      edge {
        local_ts = 10.100.0.7/32,192.168.90.0/24
        remote_ts = 10.100.0.6/32,192.168.50.0/24
        esp_proposals = aes256-sha256-modp2048
      }
    }
  }
}
secrets {
  ike-edge {
    id = 10.101.1.2
    secret = "lab-psk-0123456789"
  }
}
`,
  );
  await ns.addAddress("lo", "10.100.0.7/32");
  await ns.addAddress("lo", "192.168.90.1/32");
  scope.spawn(ns, ["/usr/sbin/charon-systemd"], { env: { STRONGSWAN_CONF: conf } });
  const { Netns } = await import("@tern/netlab");
  await Netns.waitFor(
    "peer charon's vici socket",
    async () => (await ns.exec(["test", "-S", vici], { allowFailure: true })).exitCode === 0,
  );
  await ns.exec(["swanctl", "--load-all", "--file", join(dir, "swanctl.conf"), "--uri", `unix://${vici}`], { timeoutMs: 10_000 });
  await Netns.waitFor(
    "peer ipsec0",
    async () => (await ns.exec(["ip", "link", "show", "ipsec0"], { allowFailure: true })).exitCode === 0,
  );
  await ns.exec(["ip", "route", "add", "10.100.0.6/32", "dev", "ipsec0", "src", "10.100.0.7"]);
  await ns.exec(["ip", "route", "add", "192.168.50.0/24", "dev", "ipsec0", "src", "192.168.90.1"]);
}
