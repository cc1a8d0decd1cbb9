/**
 * IPv4 forwarding. A router with a LAN or tunnels must forward; the agent
 * turns `net.ipv4.ip_forward` on when the config needs it and, once no config
 * needs it any more, puts back the value it found. That value is recorded in
 * `<state>/links/forwarding.json` before the change (write-ahead, as for
 * addresses), so a crash in between still knows what to restore.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import { writeFileAtomic } from "../../fs.ts";
import type { DriverContext } from "../driver.ts";

const KEY = "net.ipv4.ip_forward";

/** Traffic between a LAN and the WANs or tunnels passes through this router. */
export function needsForwarding(config: DeviceConfig): boolean {
  return config.interfaces.some((i) => i.type === "LAN") || config.tunnels.length > 0;
}

export const FORWARDING_ON: string[] = ["sysctl", "-w", `${KEY}=1`];

const recordPath = (stateDir: string) => join(stateDir, "links", "forwarding.json");

async function recorded(stateDir: string): Promise<string | null> {
  const text = await readFile(recordPath(stateDir), "utf8").catch(() => null);
  const previous = text === null ? null : (JSON.parse(text) as { previous?: unknown }).previous;
  return previous === "0" || previous === "1" ? previous : null;
}

/** Brings forwarding to what `config` needs; true when it changed it. */
export async function syncForwarding(config: DeviceConfig, ctx: DriverContext): Promise<boolean> {
  const now = (await ctx.runner.run(["sysctl", "-n", KEY])).stdout.trim();
  const previous = await recorded(ctx.stateDir);
  if (needsForwarding(config)) {
    if (now === "1") return false;
    if (previous === null) await writeFileAtomic(recordPath(ctx.stateDir), `${JSON.stringify({ previous: now })}\n`, 0o644);
    await ctx.runner.run(FORWARDING_ON);
    ctx.log.info("ip forwarding on", { was: now });
    return true;
  }
  if (previous === null) return false;
  let changed = false;
  if (now !== previous) {
    await ctx.runner.run(["sysctl", "-w", `${KEY}=${previous}`]);
    ctx.log.info("ip forwarding restored", { to: previous });
    changed = true;
  }
  await rm(recordPath(ctx.stateDir), { force: true });
  return changed;
}
