/**
 * Tests that need root and network namespaces skip with a clear message where
 * those are missing; with TERN_REQUIRE_PRIVILEGED=1 (set by .ci/run) a missing
 * capability is a failure instead, so CI always runs them.
 */
import { execFileSync } from "node:child_process";

export const REQUIRE_VAR = "TERN_REQUIRE_PRIVILEGED";

/** Why namespace tests cannot run here, or null when they can. */
export function namespaceBlocker(commands: string[] = []): string | null {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "not running as root";
  try {
    execFileSync("ip", ["netns", "list"], { stdio: "ignore" });
  } catch {
    return "iproute2 'ip netns' is not available";
  }
  for (const cmd of commands) {
    try {
      execFileSync("sh", ["-c", `command -v "$1"`, "sh", cmd], { stdio: "ignore" });
    } catch {
      return `'${cmd}' is not installed`;
    }
  }
  return null;
}

/**
 * Returns true when privileged tests should run. When they cannot, it prints
 * why and returns false, or throws if TERN_REQUIRE_PRIVILEGED=1.
 */
export function privilegedTestsEnabled(suite: string, commands: string[] = [], env = process.env): boolean {
  const blocker = namespaceBlocker(commands);
  if (blocker === null) return true;
  const message = `${suite}: needs root and network namespaces, skipped: ${blocker}`;
  if (env[REQUIRE_VAR] === "1") throw new Error(`${message} (${REQUIRE_VAR}=1 makes this a failure)`);
  console.warn(message);
  return false;
}
