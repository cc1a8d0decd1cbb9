/**
 * Where the WiFi driver's files live. Standalone: one hostapd per access
 * point under `runDir/wifi/` (config, pid, control sockets, output).
 * System: Debian's `hostapd@<ifname>.service`, which runs
 * `/etc/hostapd/<ifname>.conf`.
 */
import { join } from "node:path";
import type { DaemonMode } from "../driver.ts";

export interface WifiPaths {
  mode: DaemonMode;
  dir: string;
  ctrlDir: string;
  conf(ifname: string): string;
  pidFile(ifname: string): string;
  outputFile(ifname: string): string;
  unit(ifname: string): string;
}

export function wifiPaths(mode: DaemonMode, runDir: string, sysRoot = "/"): WifiPaths {
  const dir = join(runDir, "wifi");
  if (mode === "standalone")
    return {
      mode,
      dir,
      ctrlDir: join(dir, "ctrl"),
      conf: (i) => join(dir, `hostapd-${i}.conf`),
      pidFile: (i) => join(dir, `hostapd-${i}.pid`),
      outputFile: (i) => join(dir, `hostapd-${i}.out`),
      unit: (i) => `hostapd@${i}.service`,
    };
  return {
    mode,
    dir,
    ctrlDir: "/run/hostapd",
    conf: (i) => join(sysRoot, "etc/hostapd", `${i}.conf`),
    pidFile: (i) => `/run/hostapd.${i}.pid`,
    outputFile: () => "",
    unit: (i) => `hostapd@${i}.service`,
  };
}
