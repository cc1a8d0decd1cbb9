import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bgpPaths } from "../../src/drivers/bgp/paths.ts";
import { dhcpPaths } from "../../src/drivers/dhcp/paths.ts";
import { ikev2Paths } from "../../src/drivers/ikev2/paths.ts";
import { vrrpPaths } from "../../src/drivers/vrrp/paths.ts";

const unitPath = fileURLToPath(new URL("../../systemd/tern-agent.service", import.meta.url));
const unit = readFileSync(unitPath, "utf8");
const settings = new Map(
  unit
    .split("\n")
    .filter((l) => /^\w+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);

describe("systemd unit", () => {
  it("runs the packaged daemon in system mode and keeps the router configured when stopped", () => {
    expect(settings.get("ExecStart")).toBe("/usr/bin/tern-agent run --mode system");
    // Only the agent stops; dhclient and daemons it started stay, and their pid files survive a restart.
    expect(settings.get("KillMode")).toBe("process");
    expect(settings.get("RuntimeDirectoryPreserve")).toBe("yes");
    expect(settings.get("StateDirectory")).toBe("tern-agent");
    expect(settings.get("StateDirectoryMode")).toBe("0700");
    expect(settings.get("Restart")).toBe("always");
  });

  it("leaves writable every file the drivers write in system mode, and nothing else outside its own directories", () => {
    expect(settings.get("ProtectSystem")).toBe("strict");
    const writable = (settings.get("ReadWritePaths") ?? "").split(/\s+/).map((p) => p.replace(/^-/, ""));
    const run = "/run/tern-agent";
    const bgp = bgpPaths("system", run);
    const dhcp = dhcpPaths("system", run);
    const ikev2 = ikev2Paths("system", run);
    const vrrp = vrrpPaths("system", run);
    // Written with a temp file and a rename: the directory must be writable.
    const written = [
      bgp.frrConf,
      bgp.daemonsFile,
      dhcp.conf,
      ikev2.strongswanConf,
      ikev2.swanctlConf,
      join(ikev2.connsDir, "x.conf"),
      vrrp.conf,
      vrrp.notifyScript,
    ];
    for (const file of written) expect(writable.some((w) => dirname(file) === w || dirname(file).startsWith(`${w}/`))).toBe(true);
    // State and runtime directories are writable through StateDirectory/RuntimeDirectory, not listed.
    expect(writable.every((w) => w.startsWith("/etc/") || w === "/var/log/frr")).toBe(true);
    // It must be able to turn forwarding on and to configure the host's links.
    for (const breaking of ["ProtectKernelTunables", "PrivateNetwork", "PrivateDevices", "MemoryDenyWriteExecute", "User"])
      expect(settings.has(breaking)).toBe(false);
  });

  it.runIf(hasSystemdAnalyze())("passes systemd-analyze verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "tern-unit-"));
    const copy = join(dir, "tern-agent.service");
    writeFileSync(copy, unit.replaceAll("/usr/bin/tern-agent", fileURLToPath(new URL("../../bin/tern-agent", import.meta.url))));
    try {
      expect(() => execFileSync("systemd-analyze", ["verify", copy], { stdio: "pipe" })).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function hasSystemdAnalyze(): boolean {
  try {
    execFileSync("systemd-analyze", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
