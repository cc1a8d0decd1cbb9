/**
 * Where the DHCP driver's files live. Standalone: one kea-dhcp4 per agent
 * under `runDir/dhcp/` (config, leases, log, control socket, and its pid and
 * lock files through KEA_PIDFILE_DIR / KEA_LOCKFILE_DIR). System: the
 * distro's kea-dhcp4-server.service and its paths.
 */
import { join } from "node:path";
import type { DaemonMode } from "../driver.ts";

export interface DhcpPaths {
  mode: DaemonMode;
  dir: string;
  conf: string;
  /** Where a new config is checked with `kea-dhcp4 -t` before it replaces the live one. */
  candidate: string;
  leases: string;
  log: string;
  socket: string;
  pidFile: string;
  outputFile: string;
  env: Record<string, string>;
}

export function dhcpPaths(mode: DaemonMode, runDir: string, sysRoot = "/"): DhcpPaths {
  const dir = join(runDir, "dhcp");
  if (mode === "standalone") {
    return {
      mode,
      dir,
      conf: join(dir, "kea-dhcp4.conf"),
      candidate: join(dir, "kea-dhcp4.check.conf"),
      leases: join(dir, "leases4.csv"),
      log: join(dir, "kea-dhcp4.log"),
      socket: join(dir, "kea4-ctrl.sock"),
      // kea names it <config file name without extension>.kea-dhcp4.pid in KEA_PIDFILE_DIR.
      pidFile: join(dir, "kea-dhcp4.kea-dhcp4.pid"),
      outputFile: join(dir, "kea-dhcp4.out"),
      env: { KEA_PIDFILE_DIR: dir, KEA_LOCKFILE_DIR: dir },
    };
  }
  return {
    mode,
    dir,
    conf: join(sysRoot, "etc/kea/kea-dhcp4.conf"),
    candidate: join(dir, "kea-dhcp4.check.conf"),
    leases: "/var/lib/kea/kea-leases4.csv",
    log: "/var/log/kea/kea-dhcp4.log",
    socket: "/run/kea/kea4-ctrl-socket",
    pidFile: "/run/kea/kea-dhcp4.kea-dhcp4.pid",
    outputFile: "",
    env: { KEA_LOCKFILE_DIR: dir },
  };
}
