/**
 * How the agent reaches its server and proves who it is: plain http/ws only
 * to this host unless `--insecure`; https/wss with a pinned CA (`--ca-file`),
 * refused with another CA; `tern-agent rekey` replaces the device key.
 * Certificates are made here with openssl, servers are real sockets.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDrivers } from "../../src/drivers/registry.ts";
import { loadDeviceKey } from "../../src/identity/device-key.ts";
import type { Runner } from "../../src/runner.ts";
import { startAgent } from "../support/agent-harness.ts";
import { cli } from "../support/cli.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { FakeSystem } from "../support/fake-system.ts";

const run = promisify(execFile);

interface Pki {
  caPem: string;
  caFile: string;
  otherCaFile: string;
  key: string;
  cert: string;
}

/** A CA, a server certificate for 127.0.0.1 signed by it, and an unrelated second CA. */
async function makePki(dir: string): Promise<Pki> {
  const at = (f: string) => join(dir, f);
  const ca = async (name: string) =>
    run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      at(`${name}.key`),
      "-out",
      at(`${name}.pem`),
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    ]);
  await ca("ca");
  await ca("other-ca");
  await run("openssl", [
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    at("server.key"),
    "-out",
    at("server.csr"),
    "-subj",
    "/CN=127.0.0.1",
  ]);
  await writeFile(at("ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.pem"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.pem"),
    "-days",
    "2",
    "-extfile",
    at("ext.cnf"),
  ]);
  return {
    caPem: await readFile(at("ca.pem"), "utf8"),
    caFile: at("ca.pem"),
    otherCaFile: at("other-ca.pem"),
    key: await readFile(at("server.key"), "utf8"),
    cert: await readFile(at("server.pem"), "utf8"),
  };
}

/** An address of this host that is not loopback (the agent treats it as another machine's). */
function nonLoopbackAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return undefined;
}

let pkiDir: string;
let pki: Pki;
beforeAll(async () => {
  pkiDir = await mkdtemp(join(tmpdir(), "tern-agent-pki-"));
  pki = await makePki(pkiDir);
});
afterAll(async () => {
  await rm(pkiDir, { recursive: true, force: true });
});

describe("server transport and device identity", () => {
  let dirs: TempDirs;
  let sys: FakeSystem;
  const common = () => [
    "--mode",
    "standalone",
    "--state-dir",
    dirs.stateDir,
    "--metrics-port",
    "0",
    "--ui-port",
    "0",
    "--hostname",
    "edge-a",
    "--log-level",
    "warn",
  ];
  const deps = () => ({ runner: sys as Runner, drivers: createDrivers(), env: {} });

  beforeEach(async () => {
    dirs = await tempDirs("agent-identity");
    sys = new FakeSystem([
      { name: "wan0", mac: "02:00:00:00:0a:01", up: true, addresses: ["10.100.1.2/24"] },
      { name: "lan0", mac: "02:00:00:00:0a:02" },
    ]);
  });
  afterEach(async () => {
    await dirs.remove();
  });

  it("refuses http:// to a server that is not on this host unless --insecure, and names the flag", async () => {
    const refused = await cli(["register", "--server", "http://192.0.2.10:8080", "--token", "rt_test", ...common()], deps());
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/USAGE: refusing the unencrypted server http:\/\/192\.0\.2\.10:8080.*--insecure/);
    expect(refused.err).toContain("--ca-file");

    const address = nonLoopbackAddress();
    if (!address) return console.warn("no non-loopback IPv4 address on this host: the --insecure half is skipped");
    const server = await FakeControlServer.start({ host: address, statusIntervalMs: 100 });
    const stop = new AbortController();
    try {
      const args = ["register", "--server", server.url, "--token", "rt_test", ...common()];
      expect((await cli(args, deps())).code).toBe(2);
      const allowed = await cli([...args, "--insecure"], deps());
      expect(allowed.err).toBe("");
      expect(allowed.code).toBe(0);
      // register recorded the operator's choice, so run connects without the flag again.
      const device = JSON.parse(await readFile(join(dirs.stateDir, "device.json"), "utf8"));
      expect(device.insecure).toBe(true);
      const running = cli(["run", ...common()], { ...deps(), stopSignal: stop.signal });
      await server.waitFor("hello");
      expect(server.refusedProofs).toBe(0);
      stop.abort();
      expect((await running).code).toBe(0);

      // Without the recorded choice run refuses too.
      await writeFile(join(dirs.stateDir, "device.json"), JSON.stringify({ ...device, insecure: undefined }));
      const again = await cli(["run", ...common()], { ...deps(), stopSignal: AbortSignal.abort() });
      expect(again.code).toBe(2);
      expect(again.err).toMatch(/--insecure/);
      // The loopback is this host: allowed in plain http (the lab's relays, local tests).
      expect((await cli(["register", "--server", "http://127.0.0.1:1", "--token", "x", ...common()], deps())).err).toMatch(
        /REGISTER_FAILED: cannot reach/,
      );
    } finally {
      await server.stop();
    }
  });

  it("registers and connects over https/wss with a pinned CA; another CA (or the system's store) is refused", async () => {
    const server = await FakeControlServer.start({ tls: { key: pki.key, cert: pki.cert }, statusIntervalMs: 100 });
    try {
      const args = ["register", "--server", server.url, "--token", "rt_test", ...common()];
      const wrongCa = await cli([...args, "--ca-file", pki.otherCaFile], deps());
      expect(wrongCa.code).toBe(1);
      expect(wrongCa.err).toMatch(
        /REGISTER_FAILED: cannot reach https:\/\/127\.0\.0\.1:\d+\/api\/connect\/register: .*certificate/i,
      );
      expect(wrongCa.err).toContain(pki.otherCaFile);
      const systemStore = await cli(args, deps());
      expect(systemStore.code).toBe(1);
      expect(systemStore.err).toMatch(/certificate/i);
      expect(server.registrations).toEqual([]);

      const pinned = await cli([...args, "--ca-file", pki.caFile], deps());
      expect(pinned.err).toBe("");
      expect(pinned.code).toBe(0);
      expect(JSON.parse(await readFile(join(dirs.stateDir, "device.json"), "utf8")).caFile).toBe(pki.caFile);

      // run takes the pinned CA from device.json and says hello over wss.
      const stop = new AbortController();
      const running = cli(["run", ...common()], { ...deps(), stopSignal: stop.signal });
      const hello = await server.waitFor("hello");
      expect(hello.proof?.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/api\/connect\/ws$/);
      expect(server.refusedProofs).toBe(0);
      stop.abort();
      expect((await running).code).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it("the control link does not connect when the server's certificate is not from the pinned CA", async () => {
    const server = await FakeControlServer.start({ tls: { key: pki.key, cert: pki.cert }, statusIntervalMs: 100 });
    const other = await readFile(pki.otherCaFile, "utf8");
    const h = await startAgent(server, { ca: [other] });
    try {
      await expect.poll(() => h.agent.control?.lastError ?? "", { timeout: 5000 }).toMatch(/certificate/i);
      expect(server.connections).toBe(0);
      expect(h.agent.control?.connected).toBe(false);
    } finally {
      await h.stop();
    }
    const ok = await startAgent(server, { ca: [pki.caPem] });
    try {
      await expect.poll(() => ok.agent.control?.connected, { timeout: 5000 }).toBe(true);
    } finally {
      await ok.stop();
      await server.stop();
    }
  });

  it("rekey replaces the device key: the server holds the new one and the next run proves it", async () => {
    const server = await FakeControlServer.start({ statusIntervalMs: 100 });
    try {
      expect((await cli(["register", "--server", server.url, "--token", "rt_test", ...common()], deps())).code).toBe(0);
      const keyFile = join(dirs.stateDir, "device-key.pem");
      const before = (await loadDeviceKey(keyFile))!.publicKey;
      const rekeyed = await cli(["rekey", ...common()], deps());
      expect(rekeyed.err).toBe("");
      expect(rekeyed.code).toBe(0);
      const after = (await loadDeviceKey(keyFile))!.publicKey;
      expect(after).not.toBe(before);
      expect(rekeyed.out).toContain(after);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      await expect(stat(join(dirs.stateDir, "device-key.next.pem"))).rejects.toThrow();
      expect([...server.devices.values()][0]?.publicKey).toBe(after);

      const stop = new AbortController();
      const hellos = server.messages("hello").length;
      const running = cli(["run", ...common()], { ...deps(), stopSignal: stop.signal });
      await server.waitFor("hello", (m) => server.messages("hello").indexOf(m) >= hellos);
      expect(server.messages("hello").at(-1)?.proof?.publicKey).toBe(after);
      expect(server.refusedProofs).toBe(0);
      stop.abort();
      expect((await running).code).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
