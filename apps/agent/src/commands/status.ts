/** `tern-agent status`: what the running daemon last wrote to `<run-dir>/status.json`, or why there is none. */
import { readFile } from "node:fs/promises";
import type { AgentSnapshot } from "../daemon/snapshot.ts";
import { silentLogger } from "../log.ts";
import { pidAlive } from "../process.ts";
import { StateStore } from "../reconcile/store.ts";
import { type CliDeps, pathsOf } from "./deps.ts";

/** Exit code when no daemon runs (as LSB `status` does). */
export const NOT_RUNNING = 3;

export async function status({ options, io }: CliDeps): Promise<number> {
  const paths = pathsOf(options);
  const text = await readFile(paths.status, "utf8").catch(() => null);
  const snap = text ? (JSON.parse(text) as AgentSnapshot) : null;
  const running = snap !== null && snap.connection.state !== "stopped" && pidAlive(snap.pid);
  if (options.json) {
    io.out(`${JSON.stringify({ running, snapshot: snap }, null, 2)}\n`);
    return running ? 0 : NOT_RUNNING;
  }
  if (!running) {
    const applied = await new StateStore(paths, silentLogger).loadApplied();
    io.out(
      `tern-agent is not running (no live daemon for ${paths.status})\n` +
        `applied config: ${applied ? `${applied.hash} at ${applied.appliedAt}` : "none"}\n` +
        (snap ? `last seen: ${snap.updatedAt}\n` : ""),
    );
    return NOT_RUNNING;
  }
  io.out(formatSnapshot(snap));
  return 0;
}

export function formatSnapshot(s: AgentSnapshot): string {
  const c = s.connection;
  const lines = [
    `tern-agent ${s.agentVersion}  pid ${s.pid}  ${s.mode} mode  up since ${s.startedAt}`,
    `device:      ${s.deviceId ?? "(not registered)"}  machine ${s.machineId}  host ${s.hostname}`,
    `connection:  ${c.state}${c.since ? ` since ${c.since}` : ""}${c.server ? `  ${c.url}` : ""}  reconnects ${c.reconnects}${c.lastError ? `  last error: ${c.lastError}` : ""}`,
    ...(s.controlServer ? [`             QoS marks the control link to ${s.controlServer.address}:${s.controlServer.port}`] : []),
    `applied:     ${s.appliedHash ?? "none"}${s.applying ? "  (applying now)" : ""}`,
  ];
  if (s.interrupted) lines.push(`interrupted: apply of ${s.interrupted.hash} started ${s.interrupted.startedAt} did not finish`);
  if (s.lastApply)
    lines.push(
      `last apply:  ${s.lastApply.ok ? "ok" : `FAILED: ${s.lastApply.error}`}${s.lastApply.rolledBack ? " (rolled back)" : ""}  ${s.lastApply.finishedAt}  (${s.lastApply.source})`,
    );
  const drivers = Object.values(s.drivers);
  if (drivers.length) {
    lines.push("drivers:");
    for (const d of drivers)
      lines.push(
        `  ${d.driver.padEnd(9)} ${d.ok ? "ok    " : "FAILED"} ${String(d.durationMs).padStart(6)} ms  ${d.at}${d.error ? `  ${d.error}` : ""}`,
      );
  }
  const st = s.status;
  if (st) {
    lines.push("interfaces:");
    for (const i of st.interfaces)
      lines.push(
        `  ${i.name.padEnd(15)} ${i.operState.padEnd(7)} ${`${i.IPv4}${i.IPv4Mask !== null ? `/${i.IPv4Mask}` : ""}`.padEnd(18)} gw ${(i.gateway || "-").padEnd(15)} mtu ${i.mtu}  ${i.devId}`,
      );
    lines.push(st.tunnels.length ? "tunnels:" : "tunnels:     none measured");
    const extra = new Map((s.tunnelDetails ?? []).map((d) => [d.id, d]));
    for (const t of st.tunnels) {
      const d = extra.get(t.id);
      lines.push(
        `  ${t.id.padEnd(36)} ${t.up ? "up  " : "DOWN"} loss ${t.loss.toFixed(1)}%  rtt ${t.rtt.toFixed(2)} ms  jitter ${t.jitter.toFixed(2)} ms  (${t.samples} probes${d ? ` to ${d.target}, srtt ${d.srttMs.toFixed(2)} ms; ${d.name}` : ""})`,
      );
    }
    if (st.bgp)
      lines.push(
        `bgp:         ${st.bgp.running ? "running" : "stopped"}  ${st.bgp.neighbors.map((n) => `${n.ip} ${n.state}`).join(", ")}`,
      );
    for (const v of st.vrrp) lines.push(`vrrp:        ${v.groupId} ${v.state}`);
    if (st.health)
      lines.push(
        `health:      cpu ${st.health.cpuPercent}%  memory ${st.health.memoryPercent}%  disk ${st.health.diskPercent}%  uptime ${st.health.uptimeSeconds} s`,
      );
  }
  for (const [driver, details] of Object.entries(s.driverDetails ?? {})) {
    lines.push(`${driver}:`);
    for (const l of details.lines) lines.push(`  ${l}`);
  }
  if (s.recentErrors.length) {
    lines.push("recent errors:");
    for (const e of s.recentErrors.slice(0, 5))
      lines.push(`  ${e.at}  ${e.source}: ${e.message}${e.count > 1 ? ` (×${e.count})` : ""}`);
  }
  if (s.metrics) lines.push(`metrics:     http://${s.metrics.host}:${s.metrics.port}/metrics`);
  if (s.ui) lines.push(`page:        ${s.ui.url}  (password in ${s.ui.secretFile})`);
  return `${lines.join("\n")}\n`;
}
