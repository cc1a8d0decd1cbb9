/**
 * Issue 18, the app store's remote worker VPN on the peer lab
 * (topologies/ikev2-peer.yaml, only site-a and its LAN are used): the admin
 * purchases the application, installs it on site-a and adds an EAP user
 * through the API. A stock strongSwan road-warrior client (its own
 * charon-systemd, config directory and VICI socket, in its own namespace
 * attached to the WAN cloud) connects with EAP-MSCHAPv2, trusting only the
 * organization CA, gets a virtual IP from the pool and pings a host on
 * site-a's LAN. After `updateCertificate` the router has the new certificate
 * and the client connects again and still reaches the host. A certificate
 * user connects the same way and is refused once removed (the CA's CRL);
 * `removeUser` locks the EAP user out; `uninstall` removes the VPN from the router.
 */

import { X509Certificate } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privilegedTestsEnabled, run } from "@tern/netlab";
import { PurchasedApp } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentStateDir } from "../../src/lab/control/index.ts";
import { ping } from "../helpers.ts";
import { viciUri } from "./support/ikev2.ts";
import { jobsComplete, SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: remote worker VPN", SCENARIO_COMMANDS);

const ActionResult = z.object({
  app: PurchasedApp,
  action: z.string(),
  result: z.record(z.string(), z.unknown()),
  jobIds: z.array(z.string()),
});

const SERVER_ID = "vpn.site-a.lab";
const POOL = "10.99.7.0/24";
const LAN_HOST = "192.168.10.10";
const USER = { name: "alice", password: "correct horse battery" };
/** A certificate user (the certificate's CN and DNS name). */
const CERT_USER = "bob.lab";
/** Unique per run: other helpers run namespace tests at the same time. */
const TAG = `rw${process.pid % 100_000}`;
const CLIENT_NS = `tern-${TAG}`;
/** The client's link to the cloud: its own /24, outside the cloud's attachments (100.64.1.0/24 …). */
const CLOUD_IF = `${TAG}c`;
const CLOUD_ADDR = "100.64.250.1";
const CLIENT_ADDR = "100.64.250.2";

/** strongswan.conf of the client: stock strongSwan, EAP client plugins, routes and virtual IP installed by charon. */
function clientStrongswanConf(dir: string): string {
  return `charon-systemd {
  load_modular = no
  load = random nonce openssl pem pkcs1 pkcs8 pubkey x509 revocation constraints hmac sha1 sha2 aes kdf kernel-libipsec kernel-netlink socket-default vici eap-identity eap-mschapv2 resolve
  filelog {
    client {
      path = ${dir}/charon.log
      time_format = %T
      default = 1
      ike = 2
      flush_line = yes
    }
  }
  journal { default = -1 }
  syslog { daemon { default = -1 } }
  plugins {
    vici { socket = unix://${dir}/charon.vici }
    # DNS servers the router pushes land here (no resolvconf in the lab).
    resolve { file = ${dir}/resolv.conf }
  }
}
swanctl {
  socket = unix://${dir}/charon.vici
  load = random openssl pem pkcs1 pkcs8 pubkey x509 revocation constraints
}
`;
}

/** The client's connections: `rw` (EAP), and `rwc` (certificate) once its certificate is there. */
function clientSwanctlConf(server: string, withCertificate = false): string {
  const conn = (name: string, local: string[]) => `
  ${name} {
    version = 2
    remote_addrs = ${server}
    vips = 0.0.0.0
    local {
${local.map((l) => `      ${l}`).join("\n")}
    }
    remote {
      auth = pubkey
      id = ${SERVER_ID}
      cacerts = org-ca.pem
    }
    children {
      ${name} {
        remote_ts = 192.168.10.0/24
        start_action = none
      }
    }
  }`;
  const rw = conn("rw", ["auth = eap-mschapv2", `id = ${USER.name}`, `eap_id = ${USER.name}`]);
  const rwc = withCertificate ? conn("rwc", ["auth = pubkey", `certs = ${CERT_USER}.pem`, `id = ${CERT_USER}`]) : "";
  return `connections {${rw}${rwc}
}
secrets {
  eap-alice {
    id = ${USER.name}
    secret = "${USER.password}"
  }
}
`;
}

describe.runIf(enabled)("remote worker VPN (app store) with a stock strongSwan road warrior", () => {
  let s: ScenarioLab;
  let dir: string;
  let charonPid: number | null = null;
  beforeAll(async () => {
    s = await upScenarioLab("ikev2-peer.yaml");
    dir = join(tmpdir(), `tern-${TAG}`);
    await rm(dir, { recursive: true, force: true });
    for (const sub of ["x509ca", "x509", "private"]) await mkdir(join(dir, sub), { recursive: true });
    // The client's namespace, linked to the WAN cloud like a home network on the internet.
    await run(["ip", "netns", "add", CLIENT_NS]);
    await run(["ip", "-n", s.ns("inet"), "link", "add", CLOUD_IF, "type", "veth", "peer", "name", "wan0", "netns", CLIENT_NS]);
    await run(["ip", "-n", s.ns("inet"), "addr", "add", `${CLOUD_ADDR}/24`, "dev", CLOUD_IF]);
    await run(["ip", "-n", s.ns("inet"), "link", "set", CLOUD_IF, "up"]);
    await run(["ip", "-n", CLIENT_NS, "addr", "add", `${CLIENT_ADDR}/24`, "dev", "wan0"]);
    await run(["ip", "-n", CLIENT_NS, "link", "set", "wan0", "up"]);
    await run(["ip", "-n", CLIENT_NS, "link", "set", "lo", "up"]);
    await run(["ip", "-n", CLIENT_NS, "route", "add", "default", "via", CLOUD_ADDR]);
  }, 120_000);
  afterAll(async () => {
    if (charonPid) process.kill(charonPid, "SIGTERM");
    await run(["ip", "netns", "del", CLIENT_NS], { allowFailure: true });
    if (dir) await rm(dir, { recursive: true, force: true });
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  const client = (args: string[]) =>
    run(
      [
        "ip",
        "netns",
        "exec",
        CLIENT_NS,
        "env",
        `STRONGSWAN_CONF=${join(dir, "strongswan.conf")}`,
        `SWANCTL_DIR=${dir}`,
        "swanctl",
        ...args,
        "--uri",
        `unix://${join(dir, "charon.vici")}`,
      ],
      { allowFailure: true, timeoutMs: 30_000 },
    );
  const action = (id: string, query: Record<string, string | number>) =>
    s.api.call("GET", `/api/appstore/purchased/${id}/action`, ActionResult, { query });

  /** Connects the client (`rw`: EAP, `rwc`: certificate) and returns the virtual IP it got. */
  async function connect(conn = "rw"): Promise<string> {
    const r = await client(["--initiate", "--child", conn, "--timeout", "20"]);
    expect(r.exitCode, `initiate:\n${r.stdout.slice(-1500)}`).toBe(0);
    const sas = (await client(["--list-sas"])).stdout;
    const vip =
      /remote.*\n?.*?\[?\b(10\.99\.7\.\d+)/.exec(sas)?.[1] ?? /local\s+'[^']*' @ \S+ \[(10\.99\.7\.\d+)\]/.exec(sas)?.[1];
    expect(sas, sas).toMatch(/ESTABLISHED/);
    expect(vip, `no virtual IP from ${POOL} in:\n${sas}`).toBeDefined();
    return vip as string;
  }

  it("install, EAP user, connect and reach the LAN; updateCertificate rolls out and the client reconnects", async () => {
    const t0 = performance.now();
    const app = await s.api.call("POST", "/api/appstore/purchase/remote-vpn", PurchasedApp);
    expect(app.status).toBe(201);
    const id = app.data.id;
    const cert = await action(id, { action: "updateCertificate", commonName: SERVER_ID, validityDays: 30 });
    expect(cert.status).toBe(200);
    expect(cert.data.jobIds).toEqual([]); // not installed anywhere yet
    const installed = await action(id, { action: "install", device: s.deviceId("site-a"), pool: POOL, dns: "192.168.10.53" });
    expect(installed.status).toBe(200);
    expect(installed.data.result).toMatchObject({ pool: POOL, subnets: ["192.168.10.0/24"], serverId: SERVER_ID });
    const user = await action(id, { action: "addUser", name: USER.name, password: USER.password });
    expect(user.status).toBe(200);
    expect(JSON.stringify(user.data)).not.toContain(USER.password);
    await jobsComplete(s.api, [...installed.data.jobIds, ...user.data.jobIds]);

    // The client trusts the organization CA only (as a user's device would after the admin hands it out).
    const ca = installed.data.result.ca as string;
    await writeFile(join(dir, "x509ca", "org-ca.pem"), ca);
    await writeFile(join(dir, "strongswan.conf"), clientStrongswanConf(dir));
    const wan = (await s.iface("site-a", "wan0")).IPv4;
    await writeFile(join(dir, "swanctl.conf"), clientSwanctlConf(wan), { mode: 0o600 });
    const charon = await run(
      [
        "ip",
        "netns",
        "exec",
        CLIENT_NS,
        "env",
        `STRONGSWAN_CONF=${join(dir, "strongswan.conf")}`,
        "sh",
        "-c",
        `setsid /usr/sbin/charon-systemd > ${dir}/charon.out 2>&1 < /dev/null & echo $!`,
      ],
      { timeoutMs: 10_000 },
    );
    charonPid = Number(charon.stdout.trim());
    await waitFor(10_000, async () => ((await client(["--stats"])).exitCode === 0 ? true : "client charon not up"));
    const load = await client(["--load-all", "--file", join(dir, "swanctl.conf")]);
    expect(load.exitCode, load.stderr).toBe(0);

    const vip = await connect();
    const rtt = await ping(CLIENT_NS, LAN_HOST, 5, 0.2);
    expect(rtt.received, `ping from ${vip} to ${LAN_HOST}`).toBe(5);
    // The router's side: the user, the pool address, the split tunnel.
    const routerSas = (await s.sh("site-a", ["swanctl", "--list-sas", "--uri", viciUri(s, "site-a")])).stdout;
    expect(routerSas).toMatch(/tern-rvpn: #\d+, ESTABLISHED/);
    expect(routerSas).toContain(`'${USER.name}'`);
    expect(routerSas).toMatch(/local {2}192\.168\.10\.0\/24\n/);
    expect(routerSas).toContain(`remote ${vip}/32`);
    // DNS from the install reached the client.
    expect(await readFile(join(dir, "resolv.conf"), "utf8")).toContain("192.168.10.53");

    // A new server certificate from the same CA, rolled out through a job to the device running the app.
    const oldSerial = new X509Certificate(String(cert.data.result.pem)).serialNumber;
    const updated = await action(id, { action: "updateCertificate" });
    expect(updated.status).toBe(200);
    expect(updated.data.jobIds).toHaveLength(1);
    await jobsComplete(s.api, updated.data.jobIds);
    const newCert = new X509Certificate(String(updated.data.result.pem));
    expect(newCert.serialNumber).not.toBe(oldSerial);
    const routerCerts = (await s.sh("site-a", ["swanctl", "--list-certs", "--uri", viciUri(s, "site-a")])).stdout;
    expect(routerCerts.toLowerCase()).toContain(newCert.serialNumber.toLowerCase().replace(/(..)(?!$)/g, "$1:"));

    await client(["--terminate", "--ike", "rw", "--timeout", "10"]);
    await waitFor(10_000, async () => (/ESTABLISHED/.test((await client(["--list-sas"])).stdout) ? "still connected" : true));
    const again = await connect();
    expect((await ping(CLIENT_NS, LAN_HOST, 5, 0.2)).received, `ping from ${again} after the certificate update`).toBe(5);
    // The client checked the new certificate: its log names the new serial's subject and the CA it trusts.
    const log = await readFile(join(dir, "charon.log"), "utf8");
    expect(log).toMatch(/reached self-signed root ca/);

    // A certificate user: certificate and key answered once; the client authenticates with them.
    const bob = await action(id, { action: "addUser", name: CERT_USER, auth: "certificate" });
    expect(bob.status).toBe(200);
    await jobsComplete(s.api, bob.data.jobIds);
    await writeFile(join(dir, "x509", `${CERT_USER}.pem`), String(bob.data.result.certificate));
    await writeFile(join(dir, "private", `${CERT_USER}.pem`), String(bob.data.result.privateKey), { mode: 0o600 });
    await writeFile(join(dir, "swanctl.conf"), clientSwanctlConf(wan, true), { mode: 0o600 });
    expect((await client(["--load-all", "--file", join(dir, "swanctl.conf")])).exitCode).toBe(0);
    await client(["--terminate", "--ike", "rw", "--timeout", "10"]);
    const certVip = await connect("rwc");
    expect((await ping(CLIENT_NS, LAN_HOST, 5, 0.2)).received, `ping from ${certVip} as ${CERT_USER}`).toBe(5);
    // removeUser: the certificate goes on the CA's CRL, which the router checks. Another certificate
    // user stays, so the certificate connection stays loaded: only the CRL can refuse bob.
    await jobsComplete(s.api, (await action(id, { action: "addUser", name: "carol.lab", auth: "certificate" })).data.jobIds);
    const revoked = await action(id, { action: "removeUser", name: CERT_USER });
    await jobsComplete(s.api, revoked.data.jobIds);
    expect((await s.sh("site-a", ["swanctl", "--list-conns", "--uri", viciUri(s, "site-a")])).stdout).toContain(
      "tern-rvpn-cert:",
    );
    await client(["--terminate", "--ike", "rwc", "--timeout", "10"]);
    expect((await client(["--initiate", "--child", "rwc", "--timeout", "10"])).exitCode).not.toBe(0);
    expect((await s.sh("site-a", ["swanctl", "--list-sas", "--uri", viciUri(s, "site-a")])).stdout).not.toContain(CERT_USER);
    const routerLog = await readFile(join(agentStateDir(s.lab.dir, "site-a"), "run", "ikev2", "charon.log"), "utf8");
    expect(routerLog).toMatch(/certificate was revoked/);

    // removeUser: the router forgets alice's EAP secret, her next attempt fails.
    const removed = await action(id, { action: "removeUser", name: USER.name });
    expect(removed.data.jobIds).toHaveLength(1);
    await jobsComplete(s.api, removed.data.jobIds);
    await client(["--terminate", "--ike", "rw", "--timeout", "10"]);
    expect((await client(["--initiate", "--child", "rw", "--timeout", "10"])).exitCode).not.toBe(0);

    // uninstall: the connection, pool route and credentials leave the router; the device's other config stays.
    const gone = await action(id, { action: "uninstall", device: s.deviceId("site-a") });
    await jobsComplete(s.api, gone.data.jobIds);
    const conns = await s.sh("site-a", ["swanctl", "--list-conns", "--uri", viciUri(s, "site-a")]);
    expect(conns.stdout).not.toContain("tern-rvpn");
    expect((await s.sh("site-a", ["ip", "-4", "route", "show", POOL])).stdout.trim()).toBe("");
    console.log(`remote-vpn scenario body in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
  }, 120_000);
});
