/**
 * Where the VRRP driver's files live. Standalone: one keepalived per agent,
 * everything under `runDir/vrrp/`. System: the distro's keepalived.service
 * with /etc/keepalived/keepalived.conf. In both modes keepalived writes
 * transitions to its notify FIFO `runDir/vrrp/notify.fifo`, and the notify
 * script it starts appends them to `runDir/vrrp/transitions.log`, which the
 * agent watches.
 */
import { join } from "node:path";
import type { DaemonMode } from "../driver.ts";

export interface VrrpPaths {
  mode: DaemonMode;
  dir: string;
  conf: string;
  notifyScript: string;
  notifyFifo: string;
  transitions: string;
  pidFile: string;
  vrrpPidFile: string;
  outputFile: string;
}

export function vrrpPaths(mode: DaemonMode, runDir: string, sysRoot = "/"): VrrpPaths {
  const dir = join(runDir, "vrrp");
  const etc = join(sysRoot, "etc/keepalived");
  return {
    mode,
    dir,
    conf: mode === "standalone" ? join(dir, "keepalived.conf") : join(etc, "keepalived.conf"),
    notifyScript: mode === "standalone" ? join(dir, "notify.sh") : join(etc, "tern-notify.sh"),
    notifyFifo: join(dir, "notify.fifo"),
    transitions: join(dir, "transitions.log"),
    pidFile: join(dir, "keepalived.pid"),
    vrrpPidFile: join(dir, "vrrp.pid"),
    outputFile: join(dir, "keepalived.out"),
  };
}
