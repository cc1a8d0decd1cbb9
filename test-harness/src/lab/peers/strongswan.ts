/**
 * A stock strongSwan IKEv2 gateway in a peer namespace: charon-systemd (it
 * writes no pidfile, so several run side by side) with userspace ESP
 * (kernel-libipsec, one TUN `ipsec0`), configured from the topology only.
 * Flags and settings follow docs/lab.md and the lab reference notes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Netns, run } from "@tern/netlab";
import { LabError, LabErrorCode } from "../../errors.ts";
import type { PlanStrongswanPeer } from "../../plan/types.ts";
import { MAX_SOCKET_PATH } from "../paths.ts";
import type { ProcessTable } from "../process-table.ts";

export function renderStrongswanConf(dir: string): string {
  return `charon-systemd {
  load_modular = no
  load = random nonce openssl pem pkcs1 pubkey x509 revocation constraints hmac sha1 sha2 aes kdf kernel-libipsec kernel-netlink socket-default vici
  install_routes = no
  install_virtual_ip = no
  filelog {
    lab {
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
    # kernel-libipsec always installs its routes into table 220 with a catch-all
    # rule; confining that rule to a mark nobody sets leaves routing to the lab.
    kernel-netlink { fwmark = 0x4242 }
  }
}
swanctl {
  socket = unix://${dir}/charon.vici
  load = random openssl pem pkcs1 pubkey x509 revocation constraints
}
`;
}

export function renderSwanctlConf(p: PlanStrongswanPeer): string {
  const c = p.config;
  const esp = c.pfs ? `${c.espProposal}-${c.pfsGroup}` : c.espProposal;
  return `connections {
  peer {
    version = 2
    local_addrs = ${p.localAddress}
    remote_addrs = ${p.remoteAddress}
    proposals = ${c.ikeProposal}
    rekey_time = ${c.ikeLifeTime}s
    reauth_time = 0
    dpd_delay = 10s
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
        local_ts = ${c.localTs.join(",")}
        remote_ts = ${c.remoteTs.join(",")}
        esp_proposals = ${esp}
        rekey_time = ${c.childLifeTime}s
        life_time = ${Math.round(c.childLifeTime * 1.1)}s
        dpd_action = restart
        start_action = ${c.startAction}
      }
    }
  }
}
secrets {
  ike-peer {
    id-a = ${c.localId}
    id-b = ${c.remoteId}
    secret = "${c.psk.replaceAll('"', '\\"')}"
  }
}
`;
}

/** Paths a test needs to drive the peer (swanctl --uri unix://<vici>). */
export function strongswanPaths(dir: string) {
  return { conf: join(dir, "strongswan.conf"), swanctl: join(dir, "swanctl.conf"), vici: join(dir, "charon.vici") };
}

export async function startStrongswanPeer(p: PlanStrongswanPeer, ns: string, dir: string, procs: ProcessTable): Promise<void> {
  await mkdir(dir, { recursive: true });
  const paths = strongswanPaths(dir);
  if (paths.vici.length > MAX_SOCKET_PATH) {
    throw new LabError(
      LabErrorCode.PREREQUISITE_MISSING,
      `socket path too long for a unix socket: ${paths.vici}; use a shorter --state-dir`,
    );
  }
  await writeFile(paths.conf, renderStrongswanConf(dir));
  await writeFile(paths.swanctl, renderSwanctlConf(p), { mode: 0o600 });
  const env = { STRONGSWAN_CONF: paths.conf };
  await procs.ensure({
    key: `peer:${p.node}:charon`,
    role: "strongswan",
    argv: ["/usr/sbin/charon-systemd"],
    netns: ns,
    env,
    log: join(dir, "charon.stdout"),
  });
  const netns = new Netns(ns);
  await Netns.waitFor(`charon vici socket in ${dir}`, async () => {
    const r = await netns.exec(["swanctl", "--stats", "--uri", `unix://${paths.vici}`], { allowFailure: true, timeoutMs: 2000 });
    return r.exitCode === 0;
  });
  await run([
    "ip",
    "netns",
    "exec",
    ns,
    "env",
    `STRONGSWAN_CONF=${paths.conf}`,
    "swanctl",
    "--load-all",
    "--file",
    paths.swanctl,
    "--uri",
    `unix://${paths.vici}`,
  ]);
  if (p.routedRemoteTs.length > 0) {
    await Netns.waitFor(
      `ipsec0 in ${ns}`,
      async () => (await netns.exec(["ip", "link", "show", "dev", "ipsec0"], { allowFailure: true })).exitCode === 0,
    );
    await netns.exec(["ip", "link", "set", "dev", "ipsec0", "up"]);
    for (const ts of p.routedRemoteTs) {
      await netns.exec(["ip", "route", "replace", ts, "dev", "ipsec0", ...(p.routeSource ? ["src", p.routeSource] : [])]);
    }
  }
}
