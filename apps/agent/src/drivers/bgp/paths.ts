/**
 * Where the BGP driver's files live. Standalone: one zebra + bgpd per agent
 * under `runDir/bgp/` (owned by frr:frr, which the daemons run as), with
 * their own vty sockets and zserv socket. System: the distro's FRR
 * (`frr.service`, integrated /etc/frr/frr.conf, bgpd enabled in /etc/frr/daemons).
 */
import { join } from "node:path";
import type { DaemonMode } from "../driver.ts";

export interface BgpPaths {
  mode: DaemonMode;
  dir: string;
  zebraConf: string;
  bgpdConf: string;
  vtyshConf: string;
  /** System mode: the integrated config and the daemons list. */
  frrConf: string;
  daemonsFile: string;
  zserv: string;
  zebraPid: string;
  bgpdPid: string;
  zebraLog: string;
  bgpdLog: string;
}

export function bgpPaths(mode: DaemonMode, runDir: string, sysRoot = "/"): BgpPaths {
  const dir = join(runDir, "bgp");
  const etc = join(sysRoot, "etc/frr");
  return {
    mode,
    dir,
    zebraConf: join(dir, "zebra.conf"),
    bgpdConf: join(dir, "bgpd.conf"),
    vtyshConf: join(dir, "vtysh.conf"),
    frrConf: join(etc, "frr.conf"),
    daemonsFile: join(etc, "daemons"),
    zserv: join(dir, "zserv.api"),
    zebraPid: join(dir, "zebra.pid"),
    bgpdPid: join(dir, "bgpd.pid"),
    zebraLog: join(dir, "zebra.log"),
    bgpdLog: join(dir, "bgpd.log"),
  };
}
