/**
 * Remote access (the app store's remote worker VPN) in the same charon as the
 * tunnels: one swanctl file with two responder connections (EAP-MSCHAPv2
 * users, and users with a certificate of the organization CA), the virtual IP
 * pool with its DNS servers, the EAP secrets, and the server certificate, its
 * key, the CA and its CRL as swanctl credential files. Pure and golden-tested; the
 * driver writes the files and routes the pool into the VPN.
 */
import type { ConfigRemoteVpn } from "@tern/protocol";
import type { RenderedFile } from "../driver.ts";
import { CONN_PREFIX, LIBIPSEC_DEVICE } from "./names.ts";
import type { Ikev2Paths } from "./paths.ts";
import type { OwnedLink, OwnedRoute } from "./plumbing.ts";
import type { Dataplane } from "./render.ts";

/** The connection (file) name; the certificate-user connection adds `-cert`. */
export const RA_CONN = `${CONN_PREFIX}rvpn`;
export const RA_CERT_CONN = `${RA_CONN}-cert`;
/** XFRM interface and if_id of remote-access traffic (tunnels use 1… and 2^20…). */
export const RA_XFRM_IF = "xfrm-r0";
export const RA_XFRM_IF_ID = 1 << 21;
/** Credential file names in swanctl's x509/, x509ca/ and private/ directories. */
export const RA_CERT_FILE = `${RA_CONN}.pem`;
export const RA_CA_FILE = `${RA_CONN}-ca.pem`;
export const RA_KEY_FILE = `${RA_CONN}.pem`;
export const RA_CRL_FILE = `${RA_CONN}.crl`;

/**
 * Proposals road-warrior clients offer: strongSwan's own client, Windows
 * (aes256-sha256-modp2048 once its DH group is raised, modp1024 is refused),
 * macOS/iOS and Android (AES-GCM with ECP). `default` keeps strongSwan's
 * built-in list as a fallback.
 */
const IKE_PROPOSALS = "aes256-sha256-modp2048,aes256gcm16-prfsha384-ecp384,aes128gcm16-prfsha256-ecp256,default";
const ESP_PROPOSALS = "aes256gcm16,aes256-sha256,aes128gcm16,default";

function quote(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function ref(paths: Ikev2Paths, absolute: string): string {
  return paths.mode === "standalone" ? absolute.slice(paths.dir.length + 1) : absolute;
}

function connection(name: string, ra: ConfigRemoteVpn, remote: string[], dataplane: Dataplane): string[] {
  const ifId = dataplane === "xfrm" ? [`if_id_in = ${RA_XFRM_IF_ID}`, `if_id_out = ${RA_XFRM_IF_ID}`] : [];
  return [
    `  ${name} {`,
    "    version = 2",
    "    local_addrs = %any",
    "    remote_addrs = %any",
    `    pools = ${RA_CONN}`,
    `    proposals = ${IKE_PROPOSALS}`,
    "    rekey_time = 0s",
    "    reauth_time = 0s",
    "    dpd_delay = 30s",
    "    keyingtries = 1",
    // A user connecting again replaces their old session (a laptop that woke up elsewhere).
    "    unique = replace",
    "    local {",
    "      auth = pubkey",
    `      certs = ${RA_CERT_FILE}`,
    `      id = ${quote(ra.serverId)}`,
    "    }",
    "    remote {",
    ...remote.map((l) => `      ${l}`),
    "    }",
    "    children {",
    `      ${name} {`,
    `        local_ts = ${ra.subnets.join(",")}`,
    `        esp_proposals = ${ESP_PROPOSALS}`,
    "        rekey_time = 1h",
    "        dpd_action = clear",
    "        start_action = none",
    "        close_action = none",
    ...ifId.map((l) => `        ${l}`),
    "      }",
    "    }",
    "  }",
  ];
}

export interface RenderedRemoteAccess {
  /** The connection file (with EAP secrets: mode 0600). */
  conn: { name: string; file: RenderedFile };
  /** The connection names charon gets from it. */
  connNames: string[];
  /** Server certificate, CA and private key files. */
  credentials: RenderedFile[];
}

/** Everything strongSwan gets for the remote-access section. */
export function renderRemoteAccess(ra: ConfigRemoteVpn, dataplane: Dataplane, paths: Ikev2Paths): RenderedRemoteAccess {
  const conns = connection(RA_CONN, ra, ["auth = eap-mschapv2", "eap_id = %any"], dataplane);
  const connNames = [RA_CONN];
  if (ra.certificateUsers) {
    conns.push(...connection(RA_CERT_CONN, ra, ["auth = pubkey", `cacerts = ${RA_CA_FILE}`], dataplane));
    connNames.push(RA_CERT_CONN);
  }
  const pool = [`  ${RA_CONN} {`, `    addrs = ${ra.pool}`, ...(ra.dns.length ? [`    dns = ${ra.dns.join(",")}`] : []), "  }"];
  // EAP secrets base64-encoded (0s…): any character of a password survives swanctl's parser.
  const secrets = ra.eapUsers.flatMap((u, i) => [
    `  eap-${RA_CONN}-${i} {`,
    `    id = ${quote(u.name)}`,
    `    secret = 0s${Buffer.from(u.password, "utf8").toString("base64")}`,
    "  }",
  ]);
  const lines = [
    "# Rendered by tern-agent (ikev2) for the remote worker VPN application; do not edit.",
    "connections {",
    ...conns,
    "}",
    "pools {",
    ...pool,
    "}",
    "secrets {",
    ...secrets,
    "}",
  ];
  const creds = paths.credsDir;
  return {
    conn: {
      name: RA_CONN,
      file: { path: ref(paths, `${paths.connsDir}/${RA_CONN}.conf`), content: `${lines.join("\n")}\n`, mode: 0o600 },
    },
    connNames,
    credentials: [
      { path: ref(paths, `${creds}/x509/${RA_CERT_FILE}`), content: ra.serverCertificate, mode: 0o644 },
      { path: ref(paths, `${creds}/x509ca/${RA_CA_FILE}`), content: ra.caCertificate, mode: 0o644 },
      { path: ref(paths, `${creds}/private/${RA_KEY_FILE}`), content: ra.serverKey, mode: 0o600 },
      // The revocation plugin checks certificate users against it: a removed user's certificate is refused.
      ...(ra.crl ? [{ path: ref(paths, `${creds}/x509crl/${RA_CRL_FILE}`), content: ra.crl, mode: 0o644 }] : []),
    ],
  };
}

/** Every credential file the driver may have written (removed when the application goes). */
export function remoteAccessCredentialPaths(paths: Ikev2Paths): string[] {
  const creds = paths.credsDir;
  return [
    `${creds}/x509/${RA_CERT_FILE}`,
    `${creds}/x509ca/${RA_CA_FILE}`,
    `${creds}/private/${RA_KEY_FILE}`,
    `${creds}/x509crl/${RA_CRL_FILE}`,
  ];
}

/**
 * The kernel side: the pool routed into the VPN (kernel-libipsec's TUN, or the
 * remote-access XFRM interface). No source address: replies to clients are
 * forwarded traffic, and the router's own traffic picks its LAN address.
 */
export function remoteAccessPlumbing(
  ra: ConfigRemoteVpn | undefined,
  dataplane: Dataplane,
): { links: OwnedLink[]; routes: OwnedRoute[] } {
  if (!ra) return { links: [], routes: [] };
  if (dataplane === "libipsec") return { links: [], routes: [{ dst: ra.pool, dev: LIBIPSEC_DEVICE, src: "" }] };
  return {
    links: [{ name: RA_XFRM_IF, parent: "lo", ifId: RA_XFRM_IF_ID }],
    routes: [{ dst: ra.pool, dev: RA_XFRM_IF, src: "" }],
  };
}
