/**
 * One Tern agent per edge, in the edge's namespace, in standalone mode (it
 * starts its own daemons with per-instance paths under its state directory).
 *
 * Contract with apps/agent (to confirm when the agent's entry point lands):
 * env TERN_SERVER_URL, TERN_AGENT_MODE=standalone, TERN_AGENT_STATE_DIR,
 * TERN_REGISTRATION_TOKEN, TERN_MACHINE_ID, TERN_LOG_LEVEL; it registers with
 * POST /api/connect/register, waits for approval, then opens its websocket.
 */
import { join } from "node:path";
import type { ProcessSpec } from "../supervisor.ts";

export interface AgentOptions {
  repoRoot: string;
  labDir: string;
  edge: string;
  netns: string;
  serverUrl: string;
  registrationToken: string;
  /** Stable per lab and edge, so a restarted agent is the same device. */
  machineId: string;
  logLevel?: string;
}

export function agentSpec(o: AgentOptions): ProcessSpec {
  const stateDir = join(o.labDir, "nodes", o.edge, "agent");
  return {
    key: `control:agent:${o.edge}`,
    role: "agent",
    argv: [join(o.repoRoot, "node_modules", ".bin", "tsx"), join(o.repoRoot, "apps", "agent", "src", "main.ts")],
    netns: o.netns,
    env: {
      TERN_SERVER_URL: o.serverUrl,
      TERN_AGENT_MODE: "standalone",
      TERN_AGENT_STATE_DIR: stateDir,
      TERN_REGISTRATION_TOKEN: o.registrationToken,
      TERN_MACHINE_ID: o.machineId,
      TERN_LOG_LEVEL: o.logLevel ?? "info",
    },
    cwd: o.repoRoot,
    log: join(o.labDir, "nodes", o.edge, "agent.log"),
  };
}
