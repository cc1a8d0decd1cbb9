/**
 * Peer presets for cloud IPsec gateways, and the multi-link policy `peer`
 * action (cloud security), on the peer lab (topologies/ikev2-peer.yaml).
 *
 * One lab: dc-gw is a stock strongSwan. For each preset the test loads into
 * it the vendor's documented side (accepted proposals, IKE version,
 * lifetimes, DPD) as written below, points Tern's peer at the preset with
 * PUT /api/peers/{id} {preset}, and checks that the IKE SA Tern initiates is
 * accepted by that side with the preset's algorithms, lifetimes and PFS.
 *
 * Then, with the security-edge preset, a policy sends the LAN's
 * internet-bound traffic through the peer: 198.18.0.1, an address only dc-gw
 * has, answers lan-a-h1 once the policy is installed and not before, while the
 * site route to the data-centre LAN keeps working.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { privilegedTestsEnabled } from "@tern/netlab";
import { MlPolicy, PEER_PRESETS, Peer, type PeerPresetValues } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agentStateDir } from "../../src/lab/control/index.ts";
import type { PlanStrongswanPeer } from "../../src/plan/types.ts";
import { ping } from "../helpers.ts";
import { ikeSas } from "./support/ikev2.ts";
import { JobsQueued, jobsComplete, SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: cloud peer presets", SCENARIO_COMMANDS);
const TunnelsCreated = z.object({ jobIds: z.array(z.string()), tunnels: z.array(z.object({ id: z.string() })) });
const PeerUpdated = Peer.extend({ jobIds: z.array(z.string()) });

/** DH groups by IANA number, as strongSwan names them. */
const GROUP: Record<number, string> = {
  2: "modp1024",
  5: "modp1536",
  14: "modp2048",
  15: "modp3072",
  16: "modp4096",
  17: "modp6144",
  18: "modp8192",
  19: "ecp256",
  20: "ecp384",
  21: "ecp521",
  22: "modp1024s160",
  23: "modp2048s224",
  24: "modp2048s256",
};
const groups = (...n: number[]) => n.map((g) => GROUP[g]!).join("-");
/** A CHILD_SA line of `swanctl --list-sas`: its unique id and ESP suite. */
const CHILD = /^ {2}net: #(\d+), reqid \d+, INSTALLED, TUNNEL(?:-in-UDP)?, ESP:(\S+)/m;
/** Bytes the far side's CHILD_SAs received. */
const bytesIn = (sas: string) => [...sas.matchAll(/^ {4}in +\S+, +(\d+) bytes/gm)].reduce((n, m) => n + Number(m[1]), 0);

/**
 * Each vendor's side as its documentation states it (the sources are in
 * packages/protocol/src/peer-presets.ts): what it accepts, its IKE version,
 * its own lifetimes and DPD. strongSwan as responder picks from its list.
 */
const VENDOR_SIDE: Record<
  string,
  { version: 0 | 2; proposals: string; esp: string; ikeLife: number; childLife: number; dpd: number }
> = {
  // Tunnel options: IKEv1 and IKEv2; AES128/256 (+GCM-16), SHA1/SHA2-256/384/512, DH 2, 14-24 both phases
  // (phase 2 also 5); lifetimes 28800 / 3600; AWS probes idle peers every 10 s.
  "aws-site-to-site": {
    version: 0,
    proposals: `aes128-aes256-sha1-sha256-sha384-sha512-${groups(2, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)},aes128gcm16-aes256gcm16-prfsha1-prfsha256-prfsha384-prfsha512-${groups(2, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)}`,
    esp: `aes128-aes256-sha1-sha256-sha384-sha512-${groups(2, 5, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)},aes128gcm16-aes256gcm16-${groups(2, 5, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24)}`,
    ikeLife: 28800,
    childLife: 3600,
    dpd: 10,
  },
  // Route-based: IKEv2; AES256/SHA256/DHGroup14 among the policy options; IKE SA 28800 s, IPsec SA 27000 s,
  // no PFS in the default policy; DPD timeout 45 s (checks every 15 s).
  "azure-vpn-gateway": {
    version: 2,
    proposals: `aes256-aes128-sha256-sha1-${groups(14, 2, 19, 20, 24)}`,
    esp: "aes256-aes128-sha256-sha1",
    ikeLife: 28800,
    childLife: 27000,
    dpd: 15,
  },
  // HA VPN: IKEv2; AES-CBC 128/192/256, SHA2-256/384/512 and SHA1, DH 14-16, 19-21 and 2/5; phase 1 36000 s,
  // phase 2 10800 s; PFS groups as phase 1.
  "gcp-ha-vpn": {
    version: 2,
    proposals: `aes256-aes192-aes128-sha512-sha384-sha256-sha1-${groups(16, 15, 14, 21, 20, 19, 5, 2)}`,
    esp: `aes256-aes192-aes128-sha512-sha384-sha256-sha1-${groups(16, 15, 14, 21, 20, 19, 5, 2)}`,
    ikeLife: 36000,
    childLife: 10800,
    dpd: 10,
  },
  // Magic WAN: IKEv2 responder only; AES-GCM-16 128/256 or AES-CBC-256, SHA2-256, DH 14 or 5, PRF SHA2-256/384/512.
  // No documented lifetimes or DPD interval: strongSwan's own are kept (4 h / 1 h rekey), DPD 10 s.
  "cloudflare-magic-wan": {
    version: 2,
    proposals: `aes256-sha256-prfsha256-prfsha384-prfsha512-${groups(14, 5)},aes128gcm16-aes256gcm16-prfsha256-prfsha384-prfsha512-${groups(14, 5)}`,
    esp: `aes256-sha256-${groups(14, 5)},aes128gcm16-aes256gcm16-${groups(14, 5)},aes256-sha256`,
    ikeLife: 14400,
    childLife: 3600,
    dpd: 10,
  },
};

function vendorSwanctl(gw: PlanStrongswanPeer, side: (typeof VENDOR_SIDE)[string]): string {
  const c = gw.config;
  return `connections {
  peer {
    version = ${side.version}
    local_addrs = ${gw.localAddress}
    remote_addrs = ${gw.remoteAddress}
    proposals = ${side.proposals}
    rekey_time = ${side.ikeLife}s
    reauth_time = 0
    dpd_delay = ${side.dpd}s
    local {
      auth = psk
      id = ${c.localId}
    }
    remote {
      auth = psk
      id = ${c.remoteId}
    }
    children {
      net {
        local_ts = 0.0.0.0/0
        remote_ts = 0.0.0.0/0
        esp_proposals = ${side.esp}
        rekey_time = ${side.childLife}s
        start_action = none
      }
    }
  }
}
secrets {
  ike-peer {
    id-a = ${c.localId}
    id-b = ${c.remoteId}
    secret = "${c.psk}"
  }
}
`;
}

describe.runIf(enabled)("cloud peer presets against stock strongSwan configured as each vendor documents", () => {
  let s: ScenarioLab;
  let gw: PlanStrongswanPeer;
  let peer: Peer;
  const gwDir = () => join(s.lab.dir, "nodes", "dc-gw", "strongswan");
  const stock = (args: string[]) => s.sh("dc-gw", ["swanctl", ...args, "--uri", `unix://${join(gwDir(), "charon.vici")}`]);
  /** The agent's rendered swanctl file of the peer tunnel. */
  const connFile = async () => {
    const dir = join(agentStateDir(s.lab.dir, "site-a"), "run", "ikev2", "conns");
    const [name] = (await readdir(dir)).filter((f) => f.startsWith("tern-peer-"));
    return readFile(join(dir, name!), "utf8");
  };
  const peerBody = (preset: string) => ({
    name: "cloud-gw",
    idType: "fqdn",
    localId: gw.config.remoteId,
    remoteIdType: "fqdn",
    remoteId: gw.config.localId,
    remoteIP: gw.localAddress,
    psk: gw.config.psk,
    localTrafficSelectors: ["192.168.10.0/24"],
    remoteTrafficSelectors: ["10.250.0.0/24"],
    preset,
  });

  beforeAll(async () => {
    s = await upScenarioLab("ikev2-peer.yaml");
    gw = s.lab.plan.peers.find((p): p is PlanStrongswanPeer => p.kind === "strongswan")!;
  });
  afterAll(async () => {
    if (!s) return;
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  it("each preset's IKE SA is accepted by its vendor's documented side, with the preset's lifetimes and PFS", async () => {
    for (const [i, preset] of PEER_PRESETS.entries()) {
      const v: PeerPresetValues = preset.values;
      const file = join(gwDir(), `vendor-${preset.id}.conf`);
      await writeFile(file, vendorSwanctl(gw, VENDOR_SIDE[preset.id]!), { mode: 0o600 });
      const load = await s.sh("dc-gw", [
        "env",
        `STRONGSWAN_CONF=${join(gwDir(), "strongswan.conf")}`,
        "swanctl",
        "--load-all",
        "--noprompt",
        "--file",
        file,
        "--uri",
        `unix://${join(gwDir(), "charon.vici")}`,
      ]);
      expect(load.exitCode, load.stderr).toBe(0);
      // The vendor side's old SA goes; Tern (the initiator) comes back with what its peer says now.
      await stock(["--terminate", "--ike", "peer", "--force"]);

      if (i === 0) {
        peer = await s.api.post("/api/peers", Peer, peerBody(preset.id));
        const wan = await s.iface("site-a", "wan0");
        const created = await s.api.call("POST", "/api/tunnels", TunnelsCreated, {
          body: { deviceA: s.deviceId("site-a"), interfaceA: wan.id, peer: peer.id },
        });
        expect(created.status).toBe(202);
        await jobsComplete(s.api, created.data.jobIds);
        // The far end of Tern's tunnel loopback lives on the gateway, as a cloud's inside tunnel address
        // does; kernel-libipsec installs no CHILD_SA whose local selectors hold no address of its own.
        const remoteLoopback = /remote_ts = ([\d.]+)\/32/.exec(await connFile())?.[1];
        expect(remoteLoopback).toBeDefined();
        expect((await s.sh("dc-gw", ["ip", "addr", "add", `${remoteLoopback}/32`, "dev", "lo"])).exitCode).toBe(0);
        // The first CHILD_SA was refused before the address was there: start over.
        await stock(["--terminate", "--ike", "peer", "--force"]);
      } else {
        const updated = await s.api.put(`/api/peers/${peer.id}`, PeerUpdated, peerBody(preset.id));
        await jobsComplete(s.api, updated.jobIds);
      }
      const got = await s.api.get(`/api/peers/${peer.id}`, Peer);
      expect(got).toMatchObject({ ...v, preset: preset.id });

      // Tern's side runs the preset's lifetimes: a fresh IKE SA rekeys within (0.9 L, L], its CHILD_SA likewise.
      let sas = "";
      await waitFor(30_000, async () => {
        sas = await ikeSas(s, "site-a");
        const ike = Number(/ESTABLISHED[\s\S]*?rekeying in (\d+)s/.exec(sas)?.[1]);
        const child = Number(/INSTALLED[\s\S]*?rekeying in (\d+)s/.exec(sas)?.[1]);
        const fresh = (n: number, l: number) => n > 0.85 * l && n <= l;
        if (fresh(ike, v.ikeLifeTime) && fresh(child, v.sessionLifeTime)) return true;
        const log = (
          await s.sh("dc-gw", [
            "sh",
            "-c",
            `grep -iE "child|traffic|selector|proposal|failed|no acceptable|TS|install" ${join(gwDir(), "charon.log")} | tail -n 30`,
          ])
        ).stdout;
        return `${preset.id}: not the preset's SA yet:\n${sas}\nvendor side's log:\n${log}`;
      });
      expect(sas).toMatch(/IKEv2/);
      expect(sas).toMatch(/AES_CBC-256\/HMAC_SHA2_256_128\/PRF_HMAC_SHA2_256\/MODP_2048/);
      const conf = await connFile();
      expect(conf).toContain(`dpd_delay = ${v.dpdDelay}s`);
      expect(conf).toMatch(new RegExp(`^ {4}version = ${v.ikeVersion}$`, "m"));

      // The vendor side accepted it: its SA is up with the same suite.
      await waitFor(10_000, async () => {
        const gwSas = (await stock(["--list-sas"])).stdout;
        return /ESTABLISHED/.test(gwSas) && /INSTALLED/.test(gwSas) ? true : `${preset.id}: no SA on the vendor side:\n${gwSas}`;
      });
      // PFS: a CHILD_SA rekeyed by the vendor side negotiates a DH group exactly when the preset has PFS.
      const first = Number(CHILD.exec((await stock(["--list-sas"])).stdout)?.[1]);
      expect((await stock(["--rekey", "--child", "net"])).exitCode).toBe(0);
      const want = v.pfs ? "AES_CBC-256/HMAC_SHA2_256_128/MODP_2048" : "AES_CBC-256/HMAC_SHA2_256_128";
      await waitFor(15_000, async () => {
        const gwSas = (await stock(["--list-sas"])).stdout;
        const rekeyed = [...gwSas.matchAll(new RegExp(CHILD.source, "gm"))].find((m) => Number(m[1]) > first);
        return rekeyed?.[2] === want ? true : `${preset.id}: want a rekeyed ${want}:\n${gwSas}`;
      });
    }
  });

  it("a policy's peer action sends the LAN's internet-bound traffic through the security edge, and only that", async () => {
    // An "internet" address that only the far side has.
    expect((await s.sh("dc-gw", ["ip", "addr", "add", "198.18.0.1/32", "dev", "lo"])).exitCode).toBe(0);
    expect((await ping(s.ns("lan-a-h1"), "198.18.0.1", 3, 0.2)).received).toBe(0);

    const policy = await s.api.post("/api/mlpolicies", MlPolicy, {
      name: "cloud-security",
      rules: [
        {
          name: "lan-a-internet",
          priority: 10,
          match: { source: "192.168.10.0/24" },
          action: { peer: peer.id, fallback: "drop" },
        },
      ],
    });
    const installed = await s.api.call("POST", `/api/mlpolicies/${policy.id}/install`, JobsQueued, {
      body: { deviceIds: [s.deviceId("site-a")] },
    });
    expect(installed.status).toBe(202);
    await jobsComplete(s.api, installed.data.jobIds);

    // The CHILD_SA now carries 0.0.0.0/0 on the far side's end.
    await waitFor(30_000, async () => {
      const sas = await ikeSas(s, "site-a");
      return /remote[^\n]*0\.0\.0\.0\/0/.test(sas) ? true : `no internet selector yet:\n${sas}`;
    });
    const before = bytesIn((await stock(["--list-sas"])).stdout);
    await waitFor(20_000, async () =>
      (await ping(s.ns("lan-a-h1"), "198.18.0.1", 1, 0.2)).received === 1 ? true : "198.18.0.1 not reachable yet",
    );
    expect((await ping(s.ns("lan-a-h1"), "198.18.0.1", 10, 0.05)).received).toBe(10);
    // The far side decrypted them (its CHILD_SA counted the bytes).
    const after = bytesIn((await stock(["--list-sas"])).stdout);
    expect(after).toBeGreaterThan(before);
    // The site route is not the internet: the data-centre LAN is still reached by its own route.
    expect((await ping(s.ns("lan-a-h1"), "10.250.0.10", 5, 0.05)).received).toBe(5);
    // The router's own traffic is not steered: its default route still leads to the WAN, where 198.18.0.1 is unknown.
    const own = await s.sh("site-a", ["ip", "-j", "route", "get", "198.18.0.1"]);
    expect(own.stdout).toContain('"dev":"wan0"');
  });
});
