/**
 * Where the IKEv2 driver's files, socket and pid live. Standalone: all under
 * `runDir/ikev2/` (one charon per agent). System: the distro's strongSwan
 * (charon-systemd as `strongswan.service`), an agent-owned snippet in
 * /etc/strongswan.d and one file per tunnel in /etc/swanctl/conf.d.
 */
import { join } from "node:path";
import type { DaemonMode } from "../driver.ts";

export interface Ikev2Paths {
  mode: DaemonMode;
  /** The driver's own directory: rendered files' relative paths resolve against it. */
  dir: string;
  /** The daemon settings file the agent writes (whole strongswan.conf standalone, a snippet in system mode). */
  strongswanConf: string;
  /** What `swanctl --load-all --file` reads. */
  swanctlConf: string;
  /** swanctl's credential directory (x509/, x509ca/, private/): SWANCTL_DIR of the standalone instance. */
  credsDir: string;
  /** Where the per-tunnel connection files go. */
  connsDir: string;
  vici: string;
  pidFile: string;
  logFile: string;
  outputFile: string;
  /** Remembers the detected dataplane so a restarted agent does not probe again. */
  dataplaneFile: string;
}

export function ikev2Paths(mode: DaemonMode, runDir: string, sysRoot = "/"): Ikev2Paths {
  const dir = join(runDir, "ikev2");
  if (mode === "standalone") {
    return {
      mode,
      dir,
      strongswanConf: join(dir, "strongswan.conf"),
      swanctlConf: join(dir, "swanctl.conf"),
      credsDir: dir,
      connsDir: join(dir, "conns"),
      vici: join(dir, "charon.vici"),
      pidFile: join(dir, "charon.pid"),
      logFile: join(dir, "charon.log"),
      outputFile: join(dir, "charon.out"),
      dataplaneFile: join(dir, "dataplane"),
    };
  }
  return {
    mode,
    dir,
    strongswanConf: join(sysRoot, "etc/strongswan.d/tern.conf"),
    swanctlConf: join(sysRoot, "etc/swanctl/swanctl.conf"),
    credsDir: join(sysRoot, "etc/swanctl"),
    connsDir: join(sysRoot, "etc/swanctl/conf.d"),
    vici: "/var/run/charon.vici",
    pidFile: "/var/run/charon.pid",
    logFile: "",
    outputFile: "",
    dataplaneFile: join(dir, "dataplane"),
  };
}
