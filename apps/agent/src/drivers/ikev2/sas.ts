/** IKE and CHILD SA state per tunnel, read from `swanctl --list-sas --pretty`. */
import type { ConfigTunnel } from "@tern/protocol";
import { connName } from "./names.ts";
import { list, num, parseViciPretty, section, str } from "./vici-pretty.ts";

export interface ChildSaState {
  state: string;
  /** DH group of this CHILD_SA's key exchange: set on rekeyed SAs when PFS is on. */
  dhGroup: string | null;
  /** Seconds until rekey / hard expiry, as charon reports them. */
  rekeyIn: number | null;
  lifeIn: number | null;
  installedFor: number | null;
  localTs: string[];
  remoteTs: string[];
  bytesIn: number;
  bytesOut: number;
}

export interface IkeSaState {
  state: string;
  localHost: string | null;
  remoteHost: string | null;
  initiator: boolean;
  dhGroup: string | null;
  establishedFor: number | null;
  rekeyIn: number | null;
  children: ChildSaState[];
}

export interface TunnelSaState {
  /** Tunnel id from the config. */
  id: string;
  conn: string;
  /** An IKE SA is ESTABLISHED with an INSTALLED CHILD_SA. */
  up: boolean;
  ikeSas: IkeSaState[];
}

/** All IKE SAs by connection name. */
export function parseListSas(text: string): Map<string, IkeSaState[]> {
  const byConn = new Map<string, IkeSaState[]>();
  for (const msg of parseViciPretty(text)) {
    if (msg.name !== "list-sa event") continue;
    for (const [conn, v] of Object.entries(msg.body)) {
      const ike = section(v);
      const children = Object.values(section(ike["child-sas"])).map((c): ChildSaState => {
        const child = section(c);
        return {
          state: str(child.state) ?? "UNKNOWN",
          dhGroup: str(child["dh-group"]),
          rekeyIn: num(child["rekey-time"]),
          lifeIn: num(child["life-time"]),
          installedFor: num(child["install-time"]),
          localTs: list(child["local-ts"]),
          remoteTs: list(child["remote-ts"]),
          bytesIn: num(child["bytes-in"]) ?? 0,
          bytesOut: num(child["bytes-out"]) ?? 0,
        };
      });
      const sa: IkeSaState = {
        state: str(ike.state) ?? "UNKNOWN",
        localHost: str(ike["local-host"]),
        remoteHost: str(ike["remote-host"]),
        initiator: str(ike.initiator) === "yes",
        dhGroup: str(ike["dh-group"]),
        establishedFor: num(ike.established),
        rekeyIn: num(ike["rekey-time"]),
        children,
      };
      byConn.set(conn, [...(byConn.get(conn) ?? []), sa]);
    }
  }
  return byConn;
}

/** Connection names loaded in charon, from `swanctl --list-conns --pretty`. */
export function parseListConns(text: string): string[] {
  return parseViciPretty(text)
    .filter((m) => m.name === "list-conn event")
    .flatMap((m) => Object.keys(m.body));
}

/** SA state of each configured tunnel. */
export function tunnelSaStates(tunnels: ConfigTunnel[], listSas: string): TunnelSaState[] {
  const byConn = parseListSas(listSas);
  return tunnels.map((t) => {
    const conn = connName(t);
    const ikeSas = byConn.get(conn) ?? [];
    const up = ikeSas.some((sa) => sa.state === "ESTABLISHED" && sa.children.some((c) => c.state === "INSTALLED"));
    return { id: t.id, conn, up, ikeSas };
  });
}
