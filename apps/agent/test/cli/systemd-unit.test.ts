import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const unitPath = fileURLToPath(new URL("../../systemd/tern-agent.service", import.meta.url));
const unit = readFileSync(unitPath, "utf8");
const settings = new Map(
  unit
    .split("\n")
    .filter((l) => /^\w+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);

describe("systemd unit", () => {
  it("runs the daemon in system mode and keeps the router configured when stopped", () => {
    expect(settings.get("ExecStart")).toBe("/opt/tern/apps/agent/bin/tern-agent run --mode system");
    // Only the agent stops; dhclient and daemons it started stay, and their pid files survive a restart.
    expect(settings.get("KillMode")).toBe("process");
    expect(settings.get("RuntimeDirectoryPreserve")).toBe("yes");
    expect(settings.get("StateDirectory")).toBe("tern-agent");
    expect(settings.get("Restart")).toBe("always");
  });

  it.runIf(hasSystemdAnalyze())("passes systemd-analyze verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "tern-unit-"));
    const copy = join(dir, "tern-agent.service");
    writeFileSync(
      copy,
      unit.replaceAll("/opt/tern/apps/agent/bin/tern-agent", fileURLToPath(new URL("../../bin/tern-agent", import.meta.url))),
    );
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
