/**
 * One Tern agent per edge, the real program (`apps/agent/bin/tern-agent`, or an installed one: TERN_AGENT_BIN),
 * inside the edge's namespace in standalone mode: it starts its own daemons
 * (charon, FRR, keepalived, kea, dhclient) with per-instance paths under its
 * state directory, so several agents share one host.
 *
 * - The machine id is written into `<state>/machine-id` before the agent first
 *   runs (standalone agents keep theirs there): `tern-lab-<lab id>-<edge>`, so
 *   the lab finds its devices among the server's by machine id, and a
 *   restarted agent is the same device.
 * - `register --server URL --token TOKEN` runs once (device.json and the
 *   device key then exist; `--insecure` when the server is reached over the
 *   lab's network in plain http);
 *   `run` is the supervised daemon. `--hostname` names the device after the
 *   edge (all namespaces share the host's hostname).
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { run } from "@tern/netlab";
import type { ProcessSpec } from "../supervisor.ts";

export interface AgentOptions {
  repoRoot: string;
  labDir: string;
  edge: string;
  netns: string;
  /** The server as the agent reaches it (through the relay). */
  serverUrl: string;
  machineId: string;
  logLevel?: string;
}

/** The agent's state directory (device.json, applied.json, logs/, run/ with its daemons). */
export function agentStateDir(labDir: string, edge: string): string {
  return join(labDir, "nodes", edge, "agent");
}

export function agentBin(repoRoot: string): string {
  return join(repoRoot, "apps", "agent", "bin", "tern-agent");
}

/**
 * The agent program as argv: an installed agent when TERN_AGENT_BIN names one (CI runs a scenario with
 * /usr/bin/tern-agent from the Debian package), executed itself so its own first line (interpreter, node
 * flags) applies; otherwise the repository's bin through this node. Either way the process execs in place,
 * so the recorded pid is the agent's.
 */
export function agentCommand(repoRoot: string, installed: string | undefined = process.env.TERN_AGENT_BIN): string[] {
  return installed ? [installed] : [process.execPath, agentBin(repoRoot)];
}

/** Options every tern-agent command of a lab edge takes. */
export function agentCommonArgs(o: Pick<AgentOptions, "labDir" | "edge">): string[] {
  return ["--mode", "standalone", "--state-dir", agentStateDir(o.labDir, o.edge), "--hostname", o.edge];
}

/** The lab's supervisor of an agent (restarts it when it exits with 75 after `restart-agent`, as systemd would). */
export const RESPAWN_SCRIPT = join(import.meta.dirname, "..", "respawn.mjs");

/** `tern-agent run` as a lab process (key `control:agent:<edge>`). */
export function agentSpec(o: AgentOptions): ProcessSpec {
  return {
    key: agentKey(o.edge),
    role: "agent",
    // `ip netns exec` execs in place: the recorded pid is respawn.mjs's, which leads the agent's process group.
    argv: [
      process.execPath,
      RESPAWN_SCRIPT,
      ...agentCommand(o.repoRoot),
      "run",
      ...agentCommonArgs(o),
      "--log-level",
      o.logLevel ?? "info",
    ],
    netns: o.netns,
    cwd: o.repoRoot,
    log: join(o.labDir, "nodes", o.edge, "agent.log"),
  };
}

export const agentKey = (edge: string) => `control:agent:${edge}`;

/** `tern-agent register …` as it runs inside the edge (the token is left out of what is shown). */
export function registerArgv(o: AgentOptions, token: string): string[] {
  return [
    "ip",
    "netns",
    "exec",
    o.netns,
    ...agentCommand(o.repoRoot),
    "register",
    "--server",
    o.serverUrl,
    "--token",
    token,
    // The lab's server speaks plain http; across the lab's own network (a cloud node) the agent
    // refuses that unless told (register records it for run).
    ...(needsInsecure(o.serverUrl) ? ["--insecure"] : []),
    ...agentCommonArgs(o),
  ];
}

/** An http:// server that is not on the edge's own loopback (the agent refuses it without --insecure). */
export function needsInsecure(serverUrl: string): boolean {
  const url = new URL(serverUrl);
  return url.protocol === "http:" && !/^(127\.|localhost$|\[::1\]$)/.test(url.hostname);
}

/** Writes the lab's machine id for the edge unless one is kept already (a converging `up`). */
export async function prepareAgentState(o: AgentOptions): Promise<void> {
  const dir = agentStateDir(o.labDir, o.edge);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, "machine-id");
  const kept = (await readFile(file, "utf8").catch(() => "")).trim();
  if (kept !== o.machineId) await writeFile(file, `${o.machineId}\n`, { mode: 0o644 });
}

/** True when the agent of this edge has registered (its device.json exists). */
export async function isRegistered(labDir: string, edge: string): Promise<boolean> {
  return stat(join(agentStateDir(labDir, edge), "device.json")).then(
    () => true,
    () => false,
  );
}

/** Runs `tern-agent register` inside the edge; throws with the agent's own words when it is refused. */
export async function registerAgent(o: AgentOptions, token: string): Promise<void> {
  const r = await run(registerArgv(o, token), { allowFailure: true, timeoutMs: 120_000 });
  if (r.exitCode !== 0)
    throw new Error(`tern-agent register in ${o.edge} failed (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim()}`);
}
