/**
 * The remote worker VPN section in the ikev2 driver: golden render of the
 * swanctl file and credentials, and a config sequence against the fake runner
 * (install → same again → new certificate → uninstall → again): repeats change
 * nothing, a new certificate reloads without restarting charon, uninstall
 * removes routes, files and the daemon.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ConfigRemoteVpn, DeviceConfig } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ikev2Driver } from "../../src/drivers/ikev2/index.ts";
import { ikev2Paths } from "../../src/drivers/ikev2/paths.ts";
import { renderRemoteAccess } from "../../src/drivers/ikev2/remote-access.ts";
import { configWith, fullConfig } from "../support/configs.ts";
import { driverContext, type TempDirs, type TestContext, tempDirs } from "../support/context.ts";
import { FakeKernel } from "../support/fake-kernel.ts";
import { argAfter, FakeProcesses } from "../support/fake-processes.ts";
import { FakeRunner } from "../support/fake-runner.ts";
import { mutatingCommands } from "../support/mutating.ts";

const PEM = (label: string, n: number) => `-----BEGIN ${label}-----\nMIIB${"A".repeat(60)}${n}\n-----END ${label}-----\n`;

const RA: ConfigRemoteVpn = {
  serverId: "vpn.example.net",
  pool: "10.99.1.0/24",
  dns: ["192.168.50.53"],
  subnets: ["192.168.50.0/24", "10.60.0.0/24"],
  serverCertificate: PEM("CERTIFICATE", 1),
  serverKey: PEM("PRIVATE KEY", 1),
  caCertificate: PEM("CERTIFICATE", 0),
  crl: PEM("X509 CRL", 0),
  eapUsers: [
    { name: "alice", password: 'pa"ss word' },
    { name: "bob@example.net", password: "hunter2-hunter2" },
  ],
  certificateUsers: true,
};

describe("ikev2 remote access render (golden)", () => {
  for (const [mode, dataplane] of [
    ["standalone", "libipsec"],
    ["standalone", "xfrm"],
    ["system", "libipsec"],
  ] as const) {
    it(`${mode} / ${dataplane}`, async () => {
      const r = renderRemoteAccess(RA, dataplane, ikev2Paths(mode, "/run/tern", "/"));
      expect(r.conn.file.mode).toBe(0o600);
      expect(r.connNames).toEqual(["tern-rvpn", "tern-rvpn-cert"]);
      await expect(r.conn.file.content).toMatchFileSnapshot(`./golden/${mode}-${dataplane}/tern-rvpn.conf`);
      expect(r.credentials.map((f) => [f.path, f.mode])).toEqual(
        mode === "standalone"
          ? [
              ["x509/tern-rvpn.pem", 0o644],
              ["x509ca/tern-rvpn-ca.pem", 0o644],
              ["private/tern-rvpn.pem", 0o600],
              ["x509crl/tern-rvpn.crl", 0o644],
            ]
          : [
              ["/etc/swanctl/x509/tern-rvpn.pem", 0o644],
              ["/etc/swanctl/x509ca/tern-rvpn-ca.pem", 0o644],
              ["/etc/swanctl/private/tern-rvpn.pem", 0o600],
              ["/etc/swanctl/x509crl/tern-rvpn.crl", 0o644],
            ],
      );
    });
  }

  it("EAP passwords are base64 (any character survives swanctl's parser); no cert connection without certificate users", () => {
    const r = renderRemoteAccess({ ...RA, certificateUsers: false }, "libipsec", ikev2Paths("standalone", "/run/tern"));
    expect(r.conn.file.content).toContain(`secret = 0s${Buffer.from('pa"ss word').toString("base64")}`);
    expect(r.conn.file.content).not.toContain('pa"ss');
    expect(r.conn.file.content).not.toContain("tern-rvpn-cert");
    expect(r.connNames).toEqual(["tern-rvpn"]);
  });
});

interface World {
  fake: FakeRunner;
  kernel: FakeKernel;
  procs: FakeProcesses;
  ctx: TestContext;
  loads: string[][];
  dir: TempDirs;
}

async function world(): Promise<World> {
  const dir = await tempDirs("ike-ra");
  const fake = new FakeRunner();
  const kernel = new FakeKernel(fake, ["wan0", "lan0"]);
  kernel.addAddress("wan0", "10.100.1.2/24");
  kernel.addAddress("lan0", "192.168.50.1/24");
  const procs = new FakeProcesses(fake);
  const w: World = { fake, kernel, procs, ctx: driverContext(fake, join(dir.root, "run")), loads: [], dir };
  let loaded: string[] = [];
  procs.daemon(/^start-stop-daemon --start .*charon-systemd/, "charon-systemd", (a) => argAfter(a, "--pidfile"), {
    start: () => kernel.addLink("ipsec0"),
    exit: () => {
      kernel.removeLink("ipsec0");
      loaded = [];
    },
  });
  fake.on(/^swanctl --load-all/, async (a) => {
    w.loads.push([...a]);
    const text = await readFile(join(a[a.indexOf("--file") + 1] ?? "", "..", "conns", "tern-rvpn.conf"), "utf8").catch(() => "");
    // Connections only: the section up to `pools {` (the pool has the connection's name too).
    const conns = text.split(/^pools \{$/m)[0] ?? "";
    loaded = [...conns.matchAll(/^ {2}(tern-\S+) \{$/gm)].map((m) => m[1] as string);
    return {};
  });
  fake.on(/^swanctl --list-conns --pretty/, () => ({
    stdout: loaded.map((n) => `list-conn event {\n  ${n} {\n    version = IKEv2\n  }\n}\n`).join(""),
  }));
  return w;
}

async function step(w: World, driver: Ikev2Driver, config: DeviceConfig) {
  w.fake.clear();
  const { changed } = await driver.apply(config, w.ctx);
  return { changed, mutating: mutatingCommands(w.fake.calls) };
}

describe("ikev2 remote access sequence (fake runner)", () => {
  let w: World;
  beforeEach(async () => {
    w = await world();
  });
  afterEach(async () => {
    await w.dir.remove();
  });

  it("install → again → new certificate → uninstall → again", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const installed = configWith({ remoteVpn: RA });
    const first = await step(w, driver, installed);
    expect(first.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toHaveLength(1);
    // Credentials are loaded with --clear, so a replaced key leaves charon; the pool is routed into ipsec0.
    expect(w.loads.at(-1)).toContain("--clear");
    expect(w.kernel.routes.map((r) => [r.dst, r.dev])).toEqual([["10.99.1.0/24", "ipsec0"]]);
    const dir = join(w.ctx.runDir, "ikev2");
    expect((await stat(join(dir, "private", "tern-rvpn.pem"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "conns", "tern-rvpn.conf"))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, "x509", "tern-rvpn.pem"), "utf8")).toBe(RA.serverCertificate);

    expect(await step(w, driver, installed)).toEqual({ changed: false, mutating: [] });

    const renewed = configWith({
      remoteVpn: { ...RA, serverCertificate: PEM("CERTIFICATE", 2), serverKey: PEM("PRIVATE KEY", 2) },
    });
    const cert = await step(w, driver, renewed);
    expect(cert.changed).toBe(true);
    expect(cert.mutating).toEqual([expect.stringMatching(/^swanctl --load-all --noprompt --clear --file /)]);
    expect(await readFile(join(dir, "private", "tern-rvpn.pem"), "utf8")).toBe(PEM("PRIVATE KEY", 2));

    const gone = await step(w, driver, configWith({}));
    expect(gone.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toEqual([]);
    expect(w.kernel.routes).toEqual([]);
    await expect(readdir(dir)).rejects.toThrow();
    expect(await step(w, driver, configWith({}))).toEqual({ changed: false, mutating: [] });
  });

  it("with tunnels: uninstalling the VPN keeps charon and the tunnels, removes only its files and route", async () => {
    const driver = new Ikev2Driver({ dataplane: "libipsec" });
    const tunnels = fullConfig().tunnels.slice(0, 1);
    await step(w, driver, configWith({ tunnels, remoteVpn: RA }));
    const pid = w.procs.pids("charon-systemd");
    const routes = w.kernel.routes.map((r) => r.dst);
    expect(routes).toContain("10.99.1.0/24");
    const off = await step(w, driver, configWith({ tunnels }));
    expect(off.changed).toBe(true);
    expect(w.procs.pids("charon-systemd")).toEqual(pid);
    expect(w.kernel.routes.map((r) => r.dst)).toEqual(routes.filter((r) => r !== "10.99.1.0/24"));
    const dir = join(w.ctx.runDir, "ikev2");
    expect(await readdir(join(dir, "conns"))).toEqual(["tern-device-1.conf"]);
    await expect(stat(join(dir, "private", "tern-rvpn.pem"))).rejects.toThrow();
    expect(w.loads.at(-1)).toContain("--clear");
  });
});
