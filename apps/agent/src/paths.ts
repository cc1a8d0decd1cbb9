/**
 * Where the agent keeps its files. `stateDir` persists (last good config,
 * device token, device key, machine id, logs, driver ownership records, dumps); `runDir`
 * is runtime only (status file, pid lock, rendered daemon configs, pid and
 * lease files) and may vanish at reboot, when every daemon is gone too.
 */
import { join } from "node:path";

export interface AgentPaths {
  stateDir: string;
  runDir: string;
  /** Device id, device token and server URL written by `register` (0600). */
  device: string;
  /** The device's Ed25519 private key (PKCS#8 PEM, 0600): its identity towards the server. */
  deviceKey: string;
  /** A new key while a re-key is in flight (promoted to deviceKey once the server holds it). */
  deviceKeyNext: string;
  /** Generated machine id when /etc/machine-id is missing (or always in standalone mode). */
  machineId: string;
  /** The last good config and its hash (0600: it holds PSKs and BGP passwords). */
  applied: string;
  /** Present while an apply runs: tells a restart that the previous apply was interrupted. */
  pending: string;
  logDir: string;
  logFile: string;
  /** Default destination of `tern-agent dump`. */
  dumps: string;
  /** Written by the daemon on every status tick; read by `tern-agent status`. */
  status: string;
  /** Held by `run` and `apply` so two reconcilers never run at once. */
  lock: string;
}

export function agentPaths(stateDir: string, runDir: string): AgentPaths {
  return {
    stateDir,
    runDir,
    device: join(stateDir, "device.json"),
    deviceKey: join(stateDir, "device-key.pem"),
    deviceKeyNext: join(stateDir, "device-key.next.pem"),
    machineId: join(stateDir, "machine-id"),
    applied: join(stateDir, "applied.json"),
    pending: join(stateDir, "pending.json"),
    logDir: join(stateDir, "logs"),
    logFile: join(stateDir, "logs", "agent.log"),
    dumps: join(stateDir, "dumps"),
    status: join(runDir, "status.json"),
    lock: join(runDir, "agent.lock"),
  };
}
