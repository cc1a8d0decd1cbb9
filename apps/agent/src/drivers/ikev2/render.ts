/**
 * Pure rendering of strongSwan configuration from the tunnels section:
 * the daemon settings (plugins, vici socket, libipsec fwmark) and one swanctl
 * file per tunnel (connection + its PSK, mode 0600). Route-based: narrow
 * traffic selectors (the tunnel loopback /32s and the subnets), routes are the
 * agent's. Golden-tested.
 */
import type { ConfigTunnel } from "@tern/protocol";
import type { RenderedFile } from "../driver.ts";
import type { LocalEnd } from "./local-wan.ts";
import { CONN_PREFIX, connName, LIBIPSEC_FWMARK, xfrmIfId } from "./names.ts";
import type { Ikev2Paths } from "./paths.ts";
import { espProposals, parseProposals } from "./proposals.ts";

export type Dataplane = "xfrm" | "libipsec";

/** pkcs8 reads the remote-access key; eap-identity and eap-mschapv2 (MD4/DES from OpenSSL's legacy provider) serve its EAP users. */
const PLUGINS =
  "random nonce openssl pem pkcs1 pkcs8 pubkey x509 revocation constraints hmac sha1 sha2 aes kdf eap-identity eap-mschapv2";

/** Retransmissions: about 24 s per attempt, so a peer that comes back is found quickly (keyingtries = 0 retries forever). */
const RETRANSMIT = ["retransmit_tries = 3", "retransmit_timeout = 2.0", "retransmit_base = 1.8"];

function quote(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** Relative (standalone) or absolute (system) path of a file in the driver's directory. */
function fileRef(paths: Ikev2Paths, absolute: string): string {
  return paths.mode === "standalone" ? absolute.slice(paths.dir.length + 1) : absolute;
}

/** The strongSwan settings the agent owns: the whole file standalone, a snippet merged into `charon` in system mode. */
export function renderDaemonConf(dataplane: Dataplane, paths: Ikev2Paths): RenderedFile {
  const libipsec = dataplane === "libipsec";
  const netlink = libipsec ? [`    kernel-netlink { fwmark = ${LIBIPSEC_FWMARK} }`] : [];
  let lines: string[];
  if (paths.mode === "standalone") {
    lines = [
      "# Rendered by tern-agent (ikev2): one charon-systemd per agent, started with STRONGSWAN_CONF=this file.",
      "charon-systemd {",
      "  load_modular = no",
      `  load = ${PLUGINS} ${libipsec ? "kernel-libipsec " : ""}kernel-netlink socket-default vici`,
      "  install_routes = no",
      "  install_virtual_ip = no",
      ...RETRANSMIT.map((l) => `  ${l}`),
      "  filelog {",
      "    tern {",
      `      path = ${paths.logFile}`,
      "      time_format = %F %T",
      "      default = 1",
      "      flush_line = yes",
      "    }",
      "  }",
      "  journal { default = -1 }",
      "  syslog { daemon { default = -1 } }",
      "  plugins {",
      `    vici { socket = unix://${paths.vici} }`,
      ...netlink,
      "  }",
      "}",
      "swanctl {",
      `  socket = unix://${paths.vici}`,
      "  load = random openssl pem pkcs1 pkcs8 pubkey x509 revocation constraints",
      "}",
    ];
  } else {
    lines = [
      "# Rendered by tern-agent (ikev2): merged into the distro's charon settings.",
      "charon {",
      "  install_routes = no",
      ...RETRANSMIT.map((l) => `  ${l}`),
      "  plugins {",
      `    kernel-libipsec { load = ${libipsec ? "yes" : "no"} }`,
      ...netlink,
      "  }",
      "}",
    ];
  }
  return { path: fileRef(paths, paths.strongswanConf), content: `${lines.join("\n")}\n`, mode: 0o644 };
}

/** The top swanctl.conf of the standalone instance: it only includes the per-tunnel files. */
export function renderSwanctlConf(paths: Ikev2Paths): RenderedFile {
  return {
    path: fileRef(paths, paths.swanctlConf),
    content: `# Rendered by tern-agent (ikev2).\ninclude conns/${CONN_PREFIX}*.conf\n`,
    mode: 0o644,
  };
}

/** Phase-1/phase-2 timing: rekey at the lifetime, 10 % jitter and grace. */
export function lifetimes(seconds: number): { rekey: number; margin: number; life: number } {
  const margin = Math.max(1, Math.ceil(seconds / 10));
  return { rekey: seconds, margin, life: seconds + margin };
}

/**
 * One tunnel's swanctl file. `localAddress` is the live address of its WAN
 * interface: IKE and ESP leave from it, never from another WAN (MOBIKE off).
 */
export function renderConnection(
  t: ConfigTunnel,
  index: number,
  localAddress: string,
  dataplane: Dataplane,
  paths: Ikev2Paths,
): RenderedFile {
  const name = connName(t);
  const path = `tunnels.${index}`;
  const ike = lifetimes(t.ike.lifetimeSeconds);
  const esp = lifetimes(t.esp.lifetimeSeconds);
  const localTs = [`${t.localLoopback}/32`, ...t.localSubnets].join(",");
  // Cloud security (a policy's `peer` action): the whole internet behind the peer; the policy driver routes into it.
  const remoteTs = [`${t.remoteLoopback}/32`, ...t.remoteSubnets, ...(t.internet ? ["0.0.0.0/0"] : [])].join(",");
  const actions = t.initiator
    ? ["start_action = start", "dpd_action = start", "close_action = start"]
    : ["start_action = none", "dpd_action = clear", "close_action = none"];
  const ifId = dataplane === "xfrm" ? [`if_id_in = ${xfrmIfId(t)}`, `if_id_out = ${xfrmIfId(t)}`] : [];
  const lines = [
    `# Rendered by tern-agent (ikev2) for ${t.kind} tunnel ${t.id}; do not edit.`,
    "connections {",
    `  ${name} {`,
    `    version = ${t.ikeVersion ?? 2}`,
    `    local_addrs = ${localAddress}`,
    `    remote_addrs = ${t.remoteAddress}`,
    `    proposals = ${parseProposals(t.ike.proposal, `${path}.ike.proposal`).join(",")}`,
    `    rekey_time = ${ike.rekey}s`,
    `    over_time = ${ike.margin}s`,
    `    rand_time = ${ike.margin}s`,
    "    reauth_time = 0s",
    `    dpd_delay = ${t.dpdSeconds}s`,
    `    keyingtries = ${t.initiator ? 0 : 1}`,
    "    mobike = no",
    "    local {",
    "      auth = psk",
    `      id = ${quote(t.auth.localId)}`,
    "    }",
    "    remote {",
    "      auth = psk",
    `      id = ${quote(t.auth.remoteId)}`,
    "    }",
    "    children {",
    `      ${name} {`,
    `        local_ts = ${localTs}`,
    `        remote_ts = ${remoteTs}`,
    `        esp_proposals = ${espProposals(t.esp, t.ike.proposal, path)}`,
    `        rekey_time = ${esp.rekey}s`,
    `        life_time = ${esp.life}s`,
    `        rand_time = ${esp.margin}s`,
    ...actions.map((a) => `        ${a}`),
    ...ifId.map((a) => `        ${a}`),
    "      }",
    "    }",
    "  }",
    "}",
    "secrets {",
    `  ike-${name} {`,
    `    id-local = ${quote(t.auth.localId)}`,
    `    id-remote = ${quote(t.auth.remoteId)}`,
    `    secret = 0s${Buffer.from(t.auth.psk, "utf8").toString("base64")}`,
    "  }",
    "}",
  ];
  return { path: fileRef(paths, `${paths.connsDir}/${name}.conf`), content: `${lines.join("\n")}\n`, mode: 0o600 };
}

export interface RenderedIkev2 {
  daemonConf: RenderedFile;
  /** Standalone only: the include-only swanctl.conf. */
  swanctlConf: RenderedFile | null;
  conns: { name: string; tunnel: ConfigTunnel; file: RenderedFile }[];
  /** Tunnels left out because their WAN interface has no address yet. */
  waiting: ConfigTunnel[];
}

/**
 * Everything strongSwan gets for `tunnels`. `addresses` maps a WAN interface
 * name to its live address; `ends`, when given, is the local end chosen per
 * tunnel id (local-wan.ts: a peer connection whose WAN is down leaves from
 * another WAN) and takes precedence; a tunnel absent from it waits.
 */
export function renderIkev2(
  tunnels: ConfigTunnel[],
  dataplane: Dataplane,
  paths: Ikev2Paths,
  addresses: ReadonlyMap<string, string | null>,
  ends?: ReadonlyMap<string, LocalEnd>,
): RenderedIkev2 {
  const conns: RenderedIkev2["conns"] = [];
  const waiting: ConfigTunnel[] = [];
  tunnels.forEach((t, i) => {
    const local = ends ? (ends.get(t.id)?.address ?? null) : (addresses.get(t.localInterface) ?? t.localAddress);
    if (!local) {
      waiting.push(t);
      return;
    }
    conns.push({ name: connName(t), tunnel: t, file: renderConnection(t, i, local, dataplane, paths) });
  });
  return {
    daemonConf: renderDaemonConf(dataplane, paths),
    swanctlConf: paths.mode === "standalone" ? renderSwanctlConf(paths) : null,
    conns,
    waiting,
  };
}
